"""The rule registry and rule files.

A rule is data: a YAML file naming a matcher primitive (see :mod:`kitbuild.matchers`), the JSON
Schema of its ``with:`` parameters, the sentence a kit's README prints for it, its documentation,
and samples that must fire and must not fire. The built-in rules are listed here by id, each the
name of a file in the top-level ``rules/`` folder; a kit.yaml may also ``use:`` the path of its own
rule file of the same shape.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from kitbuild.errors import RuleError
from kitbuild.matchers import Matcher
from kitbuild.resources import rules_dir
from kitbuild.rewrite import Rewriter
from kitbuild.schema import conforms, first_schema_error, key_path, load_schema
from kitbuild.yamlfile import YamlDocument, load_yaml

# The built-in rules, by id; each id is the name of its file in rules/ (checked on load).
BUILTIN_RULES = ("record-path-to-kit-path", "box-name-to-role", "digest-withheld")


@dataclass(frozen=True)
class Rule:
    """A loaded, validated rule file."""

    id: str
    sentence: str
    docs: Mapping[str, str]
    primitive: str
    options: Mapping[str, Any]
    params: Mapping[str, Any]
    samples: Mapping[str, list[Mapping[str, Any]]]
    origin: str  # 'built-in' or the rule file's path as the config gave it

    def check_params(self, params: Mapping[str, Any]) -> tuple[list[str | int], str] | None:
        """The first problem with a ``with:`` block, as (key path inside it, description)."""
        return first_schema_error(dict(params), dict(self.params))

    def matcher(
        self,
        params: Mapping[str, Any],
        sources: Mapping[str, str] | None = None,
        withheld: frozenset[str] = frozenset(),
    ) -> Matcher:
        """The configured matcher; ``sources`` maps each source's absolute path to its kit folder."""
        merged = {**self.options, **params}
        if self.primitive == "path_prefix":
            pairs = {k.rstrip("/") or "/": v.strip("/") for k, v in (sources or {}).items()}
            pairs.update({k.rstrip("/\\") or k: str(v).strip("/") for k, v in merged.get("map", {}).items()})
            return Matcher("path_prefix", pairs=pairs)  # each in every spelling (matchers.path_spellings)
        if self.primitive == "literal_names":
            return Matcher("literal_names", pairs=merged.get("names", {}), fields=merged.get("fields"))
        if self.primitive == "digest":
            return Matcher("digest", placeholder=merged["placeholder"], withheld=withheld)
        return Matcher(
            "regex", pattern=merged["pattern"], replace=merged.get("replace", ""), fields=merged.get("fields")
        )


def sample_problems(rule: Rule) -> list[str]:
    """Every way the rule's own samples misbehave (empty when they all hold)."""
    problems = []
    for kind in ("firing", "not_firing"):
        for i, sample in enumerate(rule.samples[kind]):
            where = f"samples.{kind}[{i}]"
            params = sample.get("with", {})
            bad = rule.check_params(params)
            if bad:
                problems.append(f"{where}.with.{key_path(bad[0])}: {bad[1]}")
                continue
            try:
                matcher = rule.matcher(params, sample.get("sources", {}), frozenset(sample.get("withheld", [])))
                rewriter = Rewriter(sample.get("path", "sample.txt"), [matcher])
                got = rewriter.feed(sample["input"].encode("utf-8")).decode("utf-8")
            except Exception as exc:  # a user's rule may carry any regex; report, never crash
                problems.append(f"{where}: the rule fails on this sample: {exc}")
                continue
            fired = rewriter.counts[0]
            if kind == "firing":
                want = sample.get("output")
                if want is None:
                    problems.append(f"{where}: a firing sample needs 'output'")
                elif got != want:
                    problems.append(f"{where}: gives {got!r}, the sample says {want!r}")
                if fired == 0 or ("firings" in sample and fired != sample["firings"]):
                    problems.append(f"{where}: fired {fired} times, the sample says {sample.get('firings', 'at least 1')}")
            elif fired or got != sample["input"]:
                problems.append(f"{where}: fired {fired} times on a sample where it must not fire (gives {got!r})")
    return problems


def load_rule_file(path: Path, label: str, *, builtin: bool = False) -> Rule:
    """Load and check one rule file: its schema, its id, its parameter schema, its samples.

    A built-in rule's parameter schema is not checked against JSON Schema's metaschema here:
    that needs jsonschema, whose import would cost every build a tenth of a second of CPU, and
    the built-in rules ship with kitbuild, whose tests check them
    (tests/rules_test.py). A rule file a kit brings is checked in full.
    """
    doc = load_yaml(path, label)
    data = doc.data
    bad = first_schema_error(data, load_schema("rule"))
    if bad:
        raise RuleError(f"{doc.where(bad[0])}: {key_path(bad[0])}: {bad[1]}. See docs/rules.md, 'Rule files'.")
    if data["id"] != path.stem:
        raise RuleError(
            f"{doc.where(['id'])}: the rule's id {data['id']!r} must equal its file name without .yaml ({path.stem!r})."
        )
    if not builtin:
        _check_params_schema(doc, data)
    rule = Rule(
        id=data["id"],
        sentence=data["sentence"].strip(),
        docs=data["docs"],
        primitive=data["matcher"]["primitive"],
        options=data["matcher"].get("options", {}),
        params=data["params"],
        samples=data["samples"],
        origin=label,
    )
    problems = sample_problems(rule)
    if problems:
        listing = "\n  ".join(problems)
        raise RuleError(f"{label}: rule {rule.id!r}: its own samples do not hold:\n  {listing}")
    return rule


# Keywords by which a schema reaches another document: a rule's params may only reach inside itself.
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _outside_refs(node: Any, path: list[str | int]) -> tuple[list[str | int], str] | None:
    """The first place in a params schema that would make a validator fetch or look up another
    document (a ``$ref`` to a URL or a file, an ``$id``, a ``$schema`` of another draft), with why."""
    work: list[tuple[Any, list[str | int]]] = [(node, path)]
    while work:
        node, path = work.pop()
        if isinstance(node, list):
            work.extend((item, [*path, i]) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in _REFS and isinstance(value, str) and not value.startswith("#"):
                return [*path, key], "refers to a schema outside this file; kitbuild fetches and reads no other schema. Put the schema it names under params' $defs and refer to it as '#/$defs/<name>'"
            if key == "$id" and isinstance(value, str):
                return [*path, key], "gives the schema an address of its own, which would make its '#' references point elsewhere. Remove it"
            if key == "$schema" and isinstance(value, str) and value.rstrip("#") != _DRAFT:
                return [*path, key], f"names a draft other than {_DRAFT}, the one kitbuild checks params with. Remove it, or name that one"
            work.append((value, [*path, key]))
    return None


def _check_params_schema(doc: YamlDocument, data: Mapping[str, Any]) -> None:
    """Refuse a kit's own rule file whose ``params`` is not a JSON Schema kitbuild can check with:
    not a valid one, one that reaches outside the file, or one whose '#' references lead nowhere."""
    import jsonschema

    outside = _outside_refs(data["params"], ["params"])
    if outside:
        raise RuleError(f"{doc.where(outside[0])}: {key_path(outside[0])}: {outside[1]}.")
    try:
        jsonschema.Draft202012Validator.check_schema(data["params"])
    except jsonschema.SchemaError as exc:
        raise RuleError(f"{doc.where(['params'])}: rule {data['id']!r}: params is not a valid JSON Schema: {exc.message}") from None
    try:
        conforms({}, data["params"])  # compiled whole: each reference is followed once
    except Exception:  # jsonschema-rs's own error names the reference: report, never crash
        raise RuleError(f"{doc.where(['params'])}: params: a '$ref' in it names no part of the schema. Make each one name a part of params, such as '#/$defs/<name>'.") from None


@functools.lru_cache(maxsize=None)
def builtin_rule(rule_id: str) -> Rule:
    """A built-in rule by id."""
    if rule_id not in BUILTIN_RULES:
        raise RuleError(f"no such rule: {rule_id!r}. The built-in rules are: {', '.join(BUILTIN_RULES)}.")
    return load_rule_file(rules_dir() / f"{rule_id}.yaml", f"rules/{rule_id}.yaml", builtin=True)


def resolve_rule(use: str, base_dir: Path) -> Rule:
    """The rule a config's ``use:`` names: a built-in id, or a rule file's path."""
    if use in BUILTIN_RULES:
        return builtin_rule(use)
    if "/" in use or use.endswith((".yaml", ".yml")):
        path = Path(use) if Path(use).is_absolute() else base_dir / use
        if not path.exists():
            # The path is not repeated: it may be private (a home folder), and CI logs publish
            # this message; the line it is given at is shown with it.
            raise RuleError(f"no rule file at the path given here (relative to kit.yaml). Give a built-in id ({', '.join(BUILTIN_RULES)}) or the path of a rule file.")
        # Named in messages by its file name alone (its stem is the rule's id, which is public).
        return load_rule_file(path, path.name)
    raise RuleError(f"no such rule: {use!r}. The built-in rules are: {', '.join(BUILTIN_RULES)}; a rule file is named by its path.")
