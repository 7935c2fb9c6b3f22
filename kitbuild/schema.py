"""JSON Schemas as data files, and one way to turn a schema error into a message.

Every config and output file kitbuild reads or writes has a schema in ``kitbuild/schemas/``. A
failure is reported like check-jsonschema does: ``file:line:col: key.path: what is wrong``.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

import orjson

from kitbuild.resources import schema_path

import jsonschema_rs

if TYPE_CHECKING:
    import jsonschema



@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``kitbuild/schemas/<name>.schema.json``."""
    schema: dict[str, Any] = orjson.loads(schema_path(name).read_bytes())
    return schema


@functools.lru_cache(maxsize=None)
def property_names(*names: str) -> frozenset[str]:
    """Every key the schemas ``names`` define, at any depth: the keys a message may spell out
    (any other key of a document is one its author chose, and may be private)."""
    found: set[str] = set()
    work: list[Any] = [load_schema(name) for name in names]
    while work:
        node = work.pop()
        if isinstance(node, Mapping):
            props = node.get("properties")
            if isinstance(props, Mapping):
                found.update(props)
            work.extend(node.values())
        elif isinstance(node, list):
            work.extend(node)
    return frozenset(found)


def key_path(path: Iterable[str | int]) -> str:
    """``['rules', 1, 'with', 'names']`` -> ``rules[1].with.names``; odd keys are quoted."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.replace("_", "").replace("-", "").isalnum():
            out += f".{step}" if out else step
        else:
            out += "[" + orjson.dumps(step).decode() + "]"
    return out or "(top level)"


def public_key_path(path: Sequence[str | int], instance: Any, schema: Mapping[str, Any], prefix: str = "") -> str:
    """Like :func:`key_path`, but a key the user chose (a private path in ``map``, a machine name in
    ``names``) is shown by its position, ``[key #2]``, never spelled out: error messages end up in
    CI logs, and the line and column already point at the key."""
    out = prefix
    node: Any = schema
    for step in path:
        props = node.get("properties", {}) if isinstance(node, Mapping) else {}
        if isinstance(step, int):
            out += f"[{step}]"
            node = node.get("items", {}) if isinstance(node, Mapping) else {}
            instance = instance[step] if isinstance(instance, list) and 0 <= step < len(instance) else None
            continue
        if step in props:
            out += f".{step}" if out else step
            node = props[step]
        else:
            position = list(instance).index(step) + 1 if isinstance(instance, Mapping) and step in instance else "?"
            out += f"[key #{position}]"
            extra = node.get("additionalProperties", {}) if isinstance(node, Mapping) else {}
            node = extra if isinstance(extra, Mapping) else {}
        instance = instance.get(step) if isinstance(instance, Mapping) else None
    return out or "(top level)"


@dataclass(frozen=True)
class SchemaProblem:
    """The best-matching violation of a document: where, and what is wrong.

    For a key the schema does not know, ``path`` is the mapping that holds it, ``unknown_key``
    the first such key in the document's order, ``allowed`` the keys that mapping may have and
    ``suggestion`` the one nearest to what was typed (None when none is near).
    """

    path: list[str | int]
    message: str
    unknown_key: str | None = None
    allowed: tuple[str, ...] = ()
    suggestion: str | None = None


def _unknown_keys(error: jsonschema.ValidationError) -> tuple[list[str], tuple[str, ...]]:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    allowed = tuple(sorted(schema.get("properties", {})))
    return [key for key in instance if key not in allowed], allowed


def nearest(typed: str, choices: Iterable[str]) -> str | None:
    """The choice nearest to ``typed`` (difflib's ratio of at least 0.6), or None."""
    close = difflib.get_close_matches(typed, list(choices), n=1)
    return close[0] if close else None


def _problem(error: jsonschema.ValidationError) -> SchemaProblem:
    path = list(error.absolute_path)
    if error.validator == "additionalProperties":
        extra, allowed = _unknown_keys(error)
        if extra and isinstance(extra[0], str):
            return SchemaProblem(path, _describe(error), extra[0], allowed, nearest(extra[0], allowed))
    return SchemaProblem(path, _describe(error))


# What kitbuild's schemas end each '$' of a pattern with (see ecma_pattern).
_NOT_BEFORE_LF = r"(?!\n)"


def _describe(error: jsonschema.ValidationError) -> str:
    # jsonschema's own text echoes the offending value, which may be a private path; name the
    # rule that failed instead and keep the value out of logs.
    validator = error.validator
    if validator == "additionalProperties":
        extra, allowed = _unknown_keys(error)
        shown = ", ".join(repr(e) for e in sorted(extra, key=str))
        close = nearest(extra[0], allowed) if len(extra) == 1 and isinstance(extra[0], str) else None
        maybe = f"; did you mean {close!r}?" if close else ""
        return f"unknown key {shown}{maybe}; the keys allowed here are: {', '.join(allowed)}"
    if validator == "required":
        return error.message.replace("is a required property", "is required here")
    if validator == "type":
        return f"must be of type {error.validator_value}"
    if validator == "pattern":
        # '(?!\n)' only keeps Python's '$' from matching before a final line break: not shown.
        shown = str(error.validator_value).replace(_NOT_BEFORE_LF, "")
        return f"does not have the required form (pattern {shown})"
    if validator == "maxLength" and isinstance(error.instance, str):
        # A kit folder or name past this breaks file systems and archive tools; say so, and how long.
        return f"is {len(error.instance)} characters long, more than the {error.validator_value} allowed. Choose a shorter one"
    if validator == "propertyNames":
        return "has a key of the wrong form: " + _describe(error.context[0]) if error.context else "has a key of the wrong form"
    if validator == "enum" and isinstance(error.validator_value, list):
        return "must be one of " + ", ".join(repr(v) for v in error.validator_value)
    if validator == "not":
        # The schemas' 'not' of a list of names refuses the kit's own files; another, a form.
        if isinstance(error.validator_value, Mapping) and "enum" in error.validator_value:
            return "is a name kitbuild reserves for the kit's own files"
        return "has a form not allowed here"
    if validator in ("oneOf", "anyOf"):
        # (A oneOf that more than one form matches has no context: nothing failed.)
        return "matches none of the forms allowed here" if error.context or validator == "anyOf" else "matches more than one of the forms allowed here"
    if validator == "const":
        return f"must be {error.validator_value!r}"
    size = _SIZES.get(str(validator))
    if size is not None:
        least, what = size
        if least and error.validator_value == 1:
            return "must not be empty"
        return f"must have at {'least' if least else 'most'} {error.validator_value} {what}"
    if validator in _BOUNDS:
        return f"must be {_BOUNDS[str(validator)]} {error.validator_value}"
    if validator == "uniqueItems":
        return "holds the same item more than once"
    if validator == "format":
        return f"is not a valid {error.validator_value}"
    # Any other rule, without jsonschema's own text: it echoes the value.
    return f"does not meet the schema's {validator!r} rule here"


# What a bound on a size or a number says (see _describe); no message echoes the value.
_SIZES = {"minItems": (True, "items"), "maxItems": (False, "items"), "minLength": (True, "characters"), "maxLength": (False, "characters"), "minProperties": (True, "keys"), "maxProperties": (False, "keys")}
_BOUNDS = {"minimum": "at least", "exclusiveMinimum": "more than", "maximum": "at most", "exclusiveMaximum": "less than", "multipleOf": "a multiple of"}


def ecma_pattern(pattern: str) -> str:
    """``pattern`` for Python's re as ECMA-262 (JSON Schema's regex dialect, and jsonschema-rs's)
    reads it: a ``$`` outside a character class ends the text, where Python's also matches
    before a final line break (so ``^[a-z]+$`` would take ``"run\\n"``)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            # A ']' first in a class ('[]...]', '[^]...]') is one of its characters in Python.
            lead = 2 if pattern.startswith("^", i + 1) else 1
            if pattern.startswith("]", i + lead):
                out.append(pattern[i : i + lead + 1])
                i += lead + 1
                continue
        elif char == "$":
            char = r"\Z"
        out.append(char)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    import regex

    return regex.compile(ecma_pattern(pattern))


# How long one 'pattern' may search a value while a failure is worded. A rule file's own schema
# may hold a pattern whose repeats match the same text many ways ('^(a|aa)+$'): jsonschema-rs
# decides it in linear time, but a backtracking search of 60 characters would never end.
PATTERN_WORDING_SECONDS = 1.0


class _TooSlow(Exception):
    """A 'pattern' took too long to be worded; the failure is named by jsonschema-rs instead."""


def _search(pattern: str, text: str) -> bool:
    try:
        return _compiled(pattern).search(text, timeout=PATTERN_WORDING_SECONDS) is not None
    except TimeoutError:
        raise _TooSlow() from None


# jsonschema's own 'pattern', 'patternProperties' and 'additionalProperties' search with Python's
# re, unbounded: these three search as jsonschema-rs reads a pattern, and within the time above.
def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    import jsonschema

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield jsonschema.ValidationError(f"does not match {pattern!r}")


def _pattern_properties_keyword(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if _search(pattern, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    import jsonschema

    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in named and not any(_search(p, key) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        yield jsonschema.ValidationError("has keys its schema does not allow")  # worded by _describe


@functools.lru_cache(maxsize=1)
def _validator_class() -> Any:
    import jsonschema.validators

    base = jsonschema.Draft202012Validator
    # An integer is an int: JSON Schema also takes 2.0, which the code that reads a count (a
    # figure's k, a list's depth) cannot use as one.
    strict = base.TYPE_CHECKER.redefine("integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool))
    keywords = {"pattern": _pattern_keyword, "patternProperties": _pattern_properties_keyword, "additionalProperties": _additional_properties_keyword}
    return jsonschema.validators.extend(base, keywords, type_checker=strict)


def _integral_float(instance: Any) -> bool:
    """Whether ``instance`` holds a float with no fraction (2.0): one JSON Schema takes for an integer."""
    if type(instance) is float:
        return instance.is_integer()
    work = [instance] if type(instance) in (dict, list) else []
    # Each container's values are looked at in one loop, by exact type: index.json of 100,000
    # files is 300,000 values, walked in 50 ms.
    while work:
        value = work.pop()
        for item in value.values() if type(value) is dict else value:
            kind = type(item)
            if kind is float:
                if item.is_integer():
                    return True
            elif kind is dict or kind is list:
                work.append(item)
    return False


def _validator(schema: dict[str, Any]) -> Any:
    # jsonschema is imported only to word what is wrong with a document that fails: 45 ms of
    # every command's start otherwise, a fifth of verifying a small kit. Its 'pattern' reads a
    # regex as jsonschema-rs does (ECMA-262), so the two never disagree on a line break.
    return _validator_class()(schema)


@functools.lru_cache(maxsize=64)
def _fast(text: bytes) -> Any:
    return jsonschema_rs.validator_for(orjson.loads(text))


def conforms(instance: Any, schema: dict[str, Any]) -> bool:
    """Whether ``instance`` meets ``schema``, decided by jsonschema-rs.

    jsonschema (in Python) spends about 120 µs on each of index.json's entries, 12 s for a kit
    of 100,000 files; jsonschema-rs decides the same document in 30 ms. jsonschema is kept to
    describe a document that fails, with the messages kitbuild words itself (see _describe).
    """
    return bool(_fast(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)).is_valid(instance))


def schema_errors(instance: Any, schema: dict[str, Any]) -> Iterator[tuple[list[str | int], str]]:
    """Every schema violation as (key path, description), most relevant first. A float with no
    fraction where the schema wants an integer is one: jsonschema-rs takes ``"size": 12.0`` for an
    integer, as the spec does, and dumped again it is the same bytes, so an index.json or
    provenance.json edited so would pass both its schema and its layout check."""
    if conforms(instance, schema) and not _integral_float(instance):
        return
    validator = _validator(schema)
    import jsonschema.exceptions

    errors = sorted(validator.iter_errors(instance), key=jsonschema.exceptions.relevance)
    for error in errors:
        best = jsonschema.exceptions.best_match([error])
        yield list(best.absolute_path), _describe(best)


def first_schema_problem(instance: Any, schema: dict[str, Any]) -> SchemaProblem | None:
    """The best-matching violation (as check-jsonschema reports it), or None. A float with no
    fraction where the schema wants an integer is one (jsonschema-rs takes it, as the spec does)."""
    fits = conforms(instance, schema)
    if fits and not _integral_float(instance):
        return None
    validator = _validator(schema)
    import jsonschema.exceptions

    try:
        best = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    except (RecursionError, _TooSlow):  # a rule file's '$ref' that leads back to itself, or a slow pattern: jsonschema-rs copes
        best = None
    if best is None:
        # jsonschema-rs refuses what jsonschema takes: never let that pass unreported.
        return None if fits else _fast_problem(instance, schema)
    return _problem(best)


def _fast_problem(instance: Any, schema: dict[str, Any]) -> SchemaProblem:
    """jsonschema-rs's first violation of ``instance``, named by its place and keyword only (its
    own message echoes the value, which may be private)."""
    for error in _fast(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)).iter_errors(instance):
        keyword = next((str(step) for step in reversed(error.schema_path) if isinstance(step, str)), "")
        return SchemaProblem(list(error.instance_path), f"does not meet the schema's {keyword!r} rule" if keyword else "does not meet the schema")
    return SchemaProblem([], "does not meet the schema")


def first_schema_error(instance: Any, schema: dict[str, Any]) -> tuple[list[str | int], str] | None:
    """The best-matching violation as (key path, description), or None."""
    problem = first_schema_problem(instance, schema)
    return None if problem is None else (problem.path, problem.message)


def keys_out_of_order(instance: Any, schema: dict[str, Any]) -> list[str | int] | None:
    """The key path of the first object whose keys are not in the order its schema's
    ``properties`` list them, or None. kitbuild writes every object so (its writers and its
    schemas list the keys in one order), so a document parsed and dumped again, which keeps its
    own order, is checked for it here. Keys a schema does not list are not placed."""
    return _first_disorder(instance, schema, schema, [])


def _resolve(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its ``$ref`` followed and its ``allOf`` parts merged in."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        node = {**root["$defs"][node["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}}
    if not isinstance(node, dict):
        return {}
    resolved: dict[str, Any] = node
    for part in resolved.get("allOf", ()):
        part = _resolve(part, root)
        resolved = {**resolved, "properties": {**part.get("properties", {}), **resolved.get("properties", {})}, "items": resolved.get("items", part.get("items"))}
    return resolved


def _first_disorder(instance: Any, node: Any, root: dict[str, Any], path: list[str | int]) -> list[str | int] | None:
    node = _resolve(node, root)
    if isinstance(instance, dict):
        order = node.get("properties")
        if not isinstance(order, dict):
            return None
        rank = {key: i for i, key in enumerate(order)}
        placed = [rank[key] for key in instance if key in rank]
        if placed != sorted(placed):
            return path
        for key, value in instance.items():
            if key in rank and isinstance(value, (dict, list)):
                found = _first_disorder(value, order[key], root, [*path, key])
                if found is not None:
                    return found
    elif isinstance(instance, list) and node.get("items") is not None:
        items = node["items"]
        # A long list of one shape (index.json's files): each distinct key order is looked at once.
        firsts: dict[tuple[str, ...], int] = {}
        for i, item in enumerate(instance):
            if isinstance(item, dict):
                firsts.setdefault(tuple(item), i)
            elif isinstance(item, list):
                found = _first_disorder(item, items, root, [*path, i])
                if found is not None:
                    return found
        for keys, i in sorted(firsts.items(), key=lambda kv: kv[1]):
            found = _first_disorder(dict.fromkeys(keys), items, root, [*path, i])
            if found is not None:
                return found
        if any(isinstance(v, (dict, list)) for item in instance if isinstance(item, dict) for v in item.values()):
            for i, item in enumerate(instance):
                if isinstance(item, dict):
                    found = _first_disorder(item, items, root, [*path, i])
                    if found is not None:
                        return found
    return None
