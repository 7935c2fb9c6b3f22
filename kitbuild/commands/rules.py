"""``kitbuild rules``: the built-in rules, documented from the rule files themselves.

Everything printed here is read from ``rules/*.yaml`` through :mod:`kitbuild.rules`: the sentence
a kit's README prints, the rule's docs, the parameters its schema accepts and the samples its own
tests run. README.md's rule reference is :func:`rules_markdown`'s output (see
:mod:`kitbuild.docs`), so the reference cannot drift from the rules.
"""

from __future__ import annotations

import textwrap
from typing import Any, Callable, Mapping

import orjson

from kitbuild.rules import BUILTIN_RULES, Rule, builtin_rule

WIDTH = 100


def builtin_rules() -> list[Rule]:
    """Every built-in rule, in registry order."""
    return [builtin_rule(rule_id) for rule_id in BUILTIN_RULES]


def type_words(schema: Mapping[str, Any]) -> str:
    """A JSON Schema fragment's type in words: 'string', 'list of strings', 'mapping of string to string'."""
    kind = schema.get("type")
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping):
            return f"mapping of string to {type_words(values)}"
        return "mapping"
    if kind == "array":
        items = schema.get("items")
        return f"list of {type_words(items)}s" if isinstance(items, Mapping) else "list"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind) if kind else "any value"


def parameters(rule: Rule) -> list[tuple[str, str, bool, str]]:
    """(key, type in words, required, description) for each ``with:`` key, in schema order."""
    required = set(rule.params.get("required", ()))
    return [
        (key, type_words(schema), key in required, str(schema.get("description", "")).strip())
        for key, schema in rule.params.get("properties", {}).items()
    ]


def shown(text: str) -> str:
    """A sample's text as a reader can see it: as is when printable, else as a JSON string."""
    return text if text.isprintable() else orjson.dumps(text).decode("utf-8")


def _flow(value: Any) -> str:
    """A sample's ``with``/``sources`` block on one line (JSON, which YAML reads too)."""
    return orjson.dumps(value).decode("utf-8")


def _sample_context(sample: Mapping[str, Any], code: Callable[[str], str] = lambda text: text) -> str:
    parts = [f"in {code(sample.get('path', 'sample.txt'))}"]
    if sample.get("sources"):
        parts.append(f"sources {code(_flow(sample['sources']))}")
    if sample.get("with"):
        parts.append(f"with {code(_flow(sample['with']))}")
    if sample.get("withheld"):
        parts.append(f"withheld {code(_flow(sample['withheld']))}")
    return ", ".join(parts)


def _fires(sample: Mapping[str, Any]) -> str:
    times = sample.get("firings")
    return "fires" if times is None else "fires once" if times == 1 else f"fires {times} times"


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), WIDTH, initial_indent=indent, subsequent_indent=indent)


def rule_text(rule: Rule) -> str:
    """One rule as ``kitbuild rules`` prints it."""
    lines = [f"{rule.id} ({rule.primitive})"]
    lines += _wrap(rule.sentence, "  ")
    lines += _wrap(f"What it does: {rule.docs['what']}", "  ")
    lines += _wrap(f"Why: {rule.docs['why']}", "  ")
    lines.append("  Parameters (with:):")
    params = parameters(rule)
    for key, kind, required, description in params:
        lines += _wrap(f"{key} ({kind}, {'required' if required else 'optional'}): {description}", "    ")
    if not params:
        lines.append("    none")
    lines.append("  Example:")
    lines += ["    " + line for line in rule.docs["example"].rstrip("\n").split("\n")]
    lines.append("  Samples (the tests run each):")
    for sample in rule.samples["firing"]:
        lines.append(f"    {_fires(sample)}, {_sample_context(sample)}:")
        lines.append(f"      {shown(sample['input'])}")
        lines.append(f"      → {shown(sample['output'])}")
    for sample in rule.samples["not_firing"]:
        lines.append(f"    does not fire, {_sample_context(sample)}:")
        lines.append(f"      {shown(sample['input'])}")
    return "\n".join(lines)


def rules_text() -> str:
    """Every built-in rule, as ``kitbuild rules`` prints them."""
    return "\n\n".join(rule_text(rule) for rule in builtin_rules())


def _code(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rule_markdown(rule: Rule) -> str:
    """One rule as README.md's reference shows it."""
    lines = [
        f"#### `{rule.id}`",
        "",
        f"> {' '.join(rule.sentence.split())}",
        "",
        f"**What it does.** {' '.join(rule.docs['what'].split())}",
        "",
        f"**Why.** {' '.join(rule.docs['why'].split())}",
        "",
        f"**Parameters** (`with:`; matcher primitive `{rule.primitive}`):",
        "",
    ]
    params = parameters(rule)
    if params:
        lines += ["| Key | Type | Required | Meaning |", "|---|---|---|---|"]
        lines += [f"| `{key}` | {kind} | {'yes' if required else 'no'} | {_cell(description)} |" for key, kind, required, description in params]
    else:
        lines.append("None.")
    lines += ["", "**Example.**", "", "```yaml", rule.docs["example"].rstrip("\n"), "```", "", "**Samples** (the tests run each):", ""]
    for sample in rule.samples["firing"]:
        lines.append(
            f"- {_fires(sample)}, {_sample_context(sample, _code)}: {_code(shown(sample['input']))} → {_code(shown(sample['output']))}"
        )
    for sample in rule.samples["not_firing"]:
        lines.append(f"- does not fire, {_sample_context(sample, _code)}: {_code(shown(sample['input']))}")
    return "\n".join(lines)


def rules_markdown() -> str:
    """README.md's built-in rule reference (the block between the ``rules`` markers)."""
    return "\n\n".join(rule_markdown(rule) for rule in builtin_rules()) + "\n"
