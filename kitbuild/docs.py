"""The generated parts of kitbuild's documentation, and the tool that keeps them in step.

Two blocks are rendered from data rather than typed: docs/rules.md's built-in rule reference (from
``rules/*.yaml``, between ``<!-- rules:start -->`` and ``<!-- rules:end -->``) and docs/config.md's
key reference (from ``kitbuild/schemas/config.schema.json``, between ``<!-- config:start -->`` and
``<!-- config:end -->``). Run ``python -m kitbuild.docs`` in a checkout after changing a rule or
the config schema; ``python -m kitbuild.docs --check`` exits 1 when a block is out of date, and
the tests run the same check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from kitbuild.commands.rules import rules_markdown, type_words
from kitbuild.schema import load_schema

CHECKOUT = Path(__file__).resolve().parent.parent


def _start(name: str) -> str:
    return f"<!-- {name}:start -->"


def _end(name: str) -> str:
    return f"<!-- {name}:end -->"


def replace_block(text: str, name: str, block: str) -> str:
    """``text`` with the lines between ``name``'s markers replaced by ``block``."""
    start, end = _start(name), _end(name)
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"expected one {start} line followed by one {end} line")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{block.rstrip(chr(10))}\n{end}{tail}"


def block_of(text: str, name: str) -> str:
    """What lies between ``name``'s markers (without the marker lines)."""
    head, rest = text.split(_start(name), 1)
    return rest.split(_end(name), 1)[0].strip("\n") + "\n"


def _schema_rows(schema: Mapping[str, Any], prefix: str, required: bool) -> Iterator[tuple[str, str, bool, str]]:
    needed = set(schema.get("required", ()))
    for key, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        kind = sub.get("type")
        if kind == "array" and isinstance(sub.get("items"), Mapping) and sub["items"].get("type") == "object":
            yield path, "list of mappings", key in needed, sub.get("description", "")
            yield from _schema_rows(sub["items"], f"{path}[]", key in needed)
        elif kind == "object" and "properties" in sub:
            yield path, "mapping", key in needed, sub.get("description", "")
            yield from _schema_rows(sub, path, key in needed)
        else:
            yield path, type_words(sub), key in needed, sub.get("description", "")


def _form(schema: Mapping[str, Any], path: str) -> str:
    """The extra constraints a key has, in words, found by walking the schema to ``path``."""
    node: Mapping[str, Any] = schema
    for step in path.replace("[]", ".[]").split("."):
        node = node["items"] if step == "[]" else node["properties"][step]
    words = []
    if "pattern" in node:
        words.append(f"matches `{node['pattern']}`")
    if "propertyNames" in node and "pattern" in node["propertyNames"]:
        words.append(f"keys match `{node['propertyNames']['pattern']}`")
    if "not" in node and "enum" in node["not"]:
        words.append("not one of " + ", ".join(f"`{v}`" for v in node["not"]["enum"]))
    if node.get("minItems") or node.get("minLength"):
        words.append("not empty")
    values = node.get("additionalProperties")
    if isinstance(values, Mapping) and values.get("minLength"):
        words.append("values not empty")
    return "; ".join(words)


def config_markdown() -> str:
    """docs/config.md's key reference: one row per key of kit.yaml, from the config schema."""
    schema = load_schema("config")
    lines = ["| Key | Type | Required | Form | Meaning |", "|---|---|---|---|---|"]
    for path, kind, required, description in _schema_rows(schema, "", True):
        meaning = " ".join(str(description).split()).replace("|", "\\|")
        form = _form(schema, path).replace("|", "\\|")
        lines.append(f"| `{path}` | {kind} | {'yes' if required else 'no'} | {form} | {meaning} |")
    return "\n".join(lines) + "\n"


# Each generated block: (file in the checkout, marker name, renderer).
BLOCKS: tuple[tuple[str, str, Callable[[], str]], ...] = (
    ("docs/rules.md", "rules", rules_markdown),
    ("docs/config.md", "config", config_markdown),
)


def stale_blocks(root: Path = CHECKOUT) -> list[str]:
    """``file (marker)`` for each generated block that differs from its renderer's output."""
    stale = []
    for name, marker, render in BLOCKS:
        text = (root / name).read_text(encoding="utf-8")
        if replace_block(text, marker, render()) != text:
            stale.append(f"{name} ({marker})")
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kitbuild.docs [--check] [ROOT]``: rewrite (or check) the generated blocks."""
    parser = argparse.ArgumentParser(prog="python -m kitbuild.docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a block is out of date")
    parser.add_argument("root", nargs="?", type=Path, default=CHECKOUT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_blocks(args.root)
        for item in stale:
            print(f"out of date: {item}; run 'python -m kitbuild.docs'", file=sys.stderr)
        return 1 if stale else 0
    for name, marker, render in BLOCKS:
        path = args.root / name
        text = path.read_text(encoding="utf-8")
        new = replace_block(text, marker, render())
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated {name} ({marker})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
