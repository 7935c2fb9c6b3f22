"""provenance.json: which rules rewrote what, counted file by file, and what verify needs.

It holds no private value: rules are recorded by their public side only (the words they write,
the fields they were limited to, the placeholder), never by what they replaced.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kitbuild.config import Config
from kitbuild.figures import FigureValue
from kitbuild.version import TOOL_NAME, __version__

# kit.yaml's keys that describe the kit for croissant.json and CITATION.cff, copied as written.
DESCRIBING_KEYS = ("authors", "url", "version", "rai")


def rule_record(use_index: int, config: Config, firings: Mapping[str, int], writes: Sequence[str]) -> dict[str, Any]:
    """One entry of provenance.json's ``rules`` list."""
    use = config.rules[use_index]
    rule = use.rule
    record: dict[str, Any] = {
        "name": rule.id,
        "builtin": rule.origin == f"rules/{rule.id}.yaml",
        "sentence": rule.sentence,
        "primitive": rule.primitive,
        "writes": list(writes),
    }
    fields = {**rule.options, **use.params}.get("fields")
    if fields:
        record["fields"] = list(fields)
    if rule.primitive == "digest":
        record["placeholder"] = {**rule.options, **use.params}["placeholder"]
    mapped = _mapped(rule.primitive, {**rule.options, **use.params}, config)
    if mapped:
        record["mapped"] = mapped
    record["firings"] = {path: n for path, n in sorted(firings.items()) if n}
    record["total"] = sum(record["firings"].values())
    return record


def _mapped(primitive: str, params: Mapping[str, Any], config: Config) -> dict[str, int]:
    """Each public word a name rule writes -> how many private names or folders became it.

    Counts only: the pages say "2 machine names became desktop" and never which names.
    """
    counts: dict[str, int] = {}
    if primitive == "path_prefix":
        targets = [source.as_ for source in config.sources] + [str(v) for v in dict(params.get("map") or {}).values()]
    elif primitive == "literal_names":
        targets = [str(v) for v in dict(params.get("names") or {}).values()]
    else:
        return counts
    for word in targets:
        counts[word] = counts.get(word, 0) + 1
    return dict(sorted(counts.items()))


def provenance_json(
    config: Config,
    rules: Sequence[dict[str, Any]],
    source_counts: Mapping[str, int],
    pages: Mapping[str, str],
    figures: Mapping[str, FigureValue] | None = None,
) -> dict[str, Any]:
    """The provenance document (a dict; write it with :func:`kitbuild.jsonfile.dump_json`).

    ``figures`` are the values computed from the built kit: each is stored with its spec as
    kit.yaml wrote it, so verify can recount it from the kit alone, and with the text the pages
    print, so the pages can be rendered again from this file.
    """
    public = config.public()
    values = figures or {}
    # What croissant.json and CITATION.cff are written from (kitbuild 0.3.0 on), each key only
    # when kit.yaml gives it, so a kit without them keeps the provenance.json it had.
    described = {key: config.data[key] for key in DESCRIBING_KEYS if key in config.data}
    document = {
        "tool": {"name": TOOL_NAME, "version": __version__},
        "kit": config.kit,
        "title": config.title,
        "date": config.date,
        "licence": config.licence,
        "summary": config.summary,
        "not_here": config.not_here,
        **described,
        "sources": [{**s, "files": source_counts.get(s["as"], 0)} for s in public["sources"]],
        "records": sum(source_counts.values()),
        "rules": list(rules),
        "external_digests": dict(sorted(config.external_digests.items())),
        "allow": public["allow"],
        "pages": dict(pages),
        "figures": {name: {"spec": dict(config.figures[name]), **value.record()} for name, value in values.items()},
        "figures_table": [dict(row) for row in config.figures_table],
    }
    return document
