"""Whether a document matches one of kitbuild's schemas, decided without jsonschema where it can be.

jsonschema's import costs a tenth of a second of CPU (attrs, referencing, and the metaschemas it
loads), more than a verify of a small kit spends on anything else, and on a large kit that tenth
is taken from the workers hashing the files. Nearly every document kitbuild checks matches its
schema, and its schemas use few keywords. So :func:`conforms` decides a document against a
schema with the keywords below, as jsonschema's Draft 2020-12 validator defines them, and
:mod:`kitbuild.schema` imports jsonschema only to describe what is wrong, or when this module
cannot tell.

The answer is exact or absent: ``True`` only where jsonschema finds no error, ``False`` only where
it finds one, ``None`` when the schema uses a keyword or a reference this module does not know,
or the document holds a value no JSON parser makes. The schemas are the same data files either
way: nothing here restates what a document must hold.
"""

from __future__ import annotations

import functools
import numbers
import re
from typing import Any, Callable, Mapping

__all__ = ["conforms"]


class _Unsure(Exception):
    """Raised where the keywords below do not decide; jsonschema then does."""


# Keywords that only describe: they never make a document fail (format included, as jsonschema
# asserts it only when given a format checker, which kitbuild never passes).
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "format"})


def _is_type(instance: Any, name: str) -> bool:
    # As jsonschema's Draft 2020-12 type checker: a bool is no number, a float with no fraction
    # is an integer.
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "null":
        return instance is None
    if name == "boolean":
        return isinstance(instance, bool)
    if isinstance(instance, bool):
        return False
    if name == "integer":
        if isinstance(instance, float):
            return instance.is_integer()
        return isinstance(instance, int)
    if name == "number":
        return isinstance(instance, numbers.Number)
    raise _Unsure


_JSON_TYPES = (str, int, float, list, dict, type(None))  # bool is an int


def _equal(one: Any, two: Any) -> bool:
    """JSON equality as jsonschema's: true and 1 differ, 1 and 1.0 do not."""
    if not isinstance(one, _JSON_TYPES) or not isinstance(two, _JSON_TYPES):
        # A tuple, or bytes from YAML's !!binary: jsonschema compares any sequence item by item,
        # and no JSON parser makes one.
        raise _Unsure
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(map(_equal, one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[key], two[key]) for key in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return False  # not the same object: True and True were caught above
    if isinstance(one, (list, dict)) or isinstance(two, (list, dict)):
        return False
    return bool(one == two)


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _type(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    names = value if isinstance(value, list) else [value]
    return any(_is_type(instance, name) for name in names)


def _properties(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if not isinstance(instance, dict):
        return True
    return all(_valid(instance[key], sub, root) for key, sub in value.items() if key in instance)


def _additional(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if not isinstance(instance, dict):
        return True
    if "patternProperties" in schema:
        raise _Unsure
    known = schema.get("properties", {})
    extras = [key for key in instance if key not in known]
    if value is False:
        return not extras
    return all(_valid(instance[key], value, root) for key in extras)


def _required(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, dict) or all(key in instance for key in value)


def _property_names(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, dict) or all(_valid(key, value, root) for key in instance)


def _min_properties(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, dict) or len(instance) >= value


def _items(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if not isinstance(instance, list):
        return True
    if "prefixItems" in schema:
        raise _Unsure
    if value is False:
        return not instance
    return all(_valid(item, value, root) for item in instance)


def _min_items(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, list) or len(instance) >= value


def _pattern(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, str) or _regex(value).search(instance) is not None


def _min_length(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, str) or len(instance) >= value


def _max_length(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not isinstance(instance, str) or len(instance) <= value


def _number(instance: Any) -> bool:
    return _is_type(instance, "number")


def _minimum(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not _number(instance) or not instance < value


def _maximum(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not _number(instance) or not instance > value


def _exclusive_minimum(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not _number(instance) or not instance <= value


def _const(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return _equal(instance, value)


def _enum(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return any(_equal(each, instance) for each in value)


def _ref(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    # Only the references kitbuild's schemas make: a plain JSON pointer into the same document
    # ("#/$defs/entry", "#/$defs/recounts/read"). Escapes (~0, ~1, %-codes) and a part that sets
    # its own $id, which would move the base the reference is read from, are left to jsonschema.
    if not isinstance(value, str) or not value.startswith("#/") or "~" in value or "%" in value:
        raise _Unsure
    node: Any = root
    for step in value[2:].split("/"):
        if not isinstance(node, dict) or step not in node:
            raise _Unsure
        node = node[step]
        if isinstance(node, dict) and "$id" in node:
            raise _Unsure
    return _valid(instance, node, root)


def _all_of(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return all(_valid(instance, sub, root) for sub in value)


def _one_of(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return sum(_valid(instance, sub, root) for sub in value) == 1


def _not(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return not _valid(instance, value, root)


def _if(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    branch = "then" if _valid(instance, value, root) else "else"
    return branch not in schema or _valid(instance, schema[branch], root)


def _applied_by_if(instance: Any, value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    return True  # then and else are applied by their if, and mean nothing without one


_KEYWORDS: dict[str, Callable[[Any, Any, Mapping[str, Any], Mapping[str, Any]], bool]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "propertyNames": _property_names,
    "minProperties": _min_properties,
    "items": _items,
    "minItems": _min_items,
    "pattern": _pattern,
    "minLength": _min_length,
    "maxLength": _max_length,
    "minimum": _minimum,
    "maximum": _maximum,
    "exclusiveMinimum": _exclusive_minimum,
    "const": _const,
    "enum": _enum,
    "$ref": _ref,
    "allOf": _all_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
    "then": _applied_by_if,
    "else": _applied_by_if,
}


def _valid(instance: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    if schema is True:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict):
        raise _Unsure
    for keyword, value in schema.items():
        check = _KEYWORDS.get(keyword)
        if check is None:
            if keyword == "$id" and schema is not root:
                raise _Unsure  # a new base for the references below it
            if keyword in _ANNOTATIONS:
                continue
            raise _Unsure
        # A failing keyword decides, whatever the ones after it would say.
        if not check(instance, value, schema, root):
            return False
    return True


def conforms(instance: Any, schema: Mapping[str, Any]) -> bool | None:
    """True when jsonschema's Draft 2020-12 validator finds ``instance`` matches ``schema``,
    False when it finds it does not, None when this module cannot tell (see the module's text)."""
    try:
        return _valid(instance, schema, schema)
    except (_Unsure, RecursionError, TypeError, re.error):
        # TypeError: a keyword's value of the wrong kind (a schema jsonschema would reject);
        # re.error: a pattern Python cannot compile. jsonschema gives its own answer to both.
        return None
