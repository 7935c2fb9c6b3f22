"""'How the figures were counted': each figure's derivation in plain sentences, from its stored spec.

The pages are rendered from provenance.json alone, so a derivation is written from what it stores
for each figure: the spec as kit.yaml declared it (which files, which fields, which statistic) and
the texts the build counted. The sentences are Markdown (file names and fields in backticks): the
README prints them as they are, and index.html renders them (:mod:`kitbuild.pages.prose`).

A figure whose definition says nothing more than its value (a ``read`` that no ``equals`` ties to
another figure: the page prints what a file states, and nothing in the kit counts it again) is
marked ``bare``, so the page can say so beside it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

Record = Mapping[str, Any]
Spec = Mapping[str, Any]


def label_of(name: str, spec: Spec) -> str:
    """The figure's label for a reader: its ``label``, or its name with spaces for underscores."""
    label = spec.get("label")
    return str(label) if isinstance(label, str) and label.strip() else name.replace("_", " ")


def _code(text: Any) -> str:
    """``text`` as Markdown code; one with a backtick in it gets a longer fence, as CommonMark allows."""
    text = str(text)
    if "`" not in text:
        return f"`{text}`"
    longest = max(len(run) for run in re.findall("`+", text))
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def _field(pointer: Any) -> str:
    """A pointer as the reference kit names fields: ``/search`` is `search`, ``/score/all@5`` `score/all@5`."""
    return _code(str(pointer).removeprefix("/"))


def _shown(record: Record | None) -> str:
    if not isinstance(record, Mapping) or "text" not in record:
        return "nothing"
    of = record.get("of")
    return str(record["text"]) + (f" of {of['text']}" if isinstance(of, Mapping) and "text" in of else "")


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _rows_common(spec: Spec) -> str:
    """What a row recount's ``skip``, ``key`` and ``agrees_with`` add, as clauses."""
    out = ""
    if "skip" in spec:
        out += f"; rows whose {_field(spec['skip'])} is true are left out"
    if "key" in spec:
        out += f"; rows are joined on {_field(spec['key'])}"
    if "agrees_with" in spec:
        out += f"; each row's stored {_field(spec['agrees_with'])} says the same, row by row (checked)"
    return out


def _ranked(spec: Spec) -> str:
    item = f" (each entry's {_field(spec['item'])})" if "item" in spec else ""
    return f"{_field(spec.get('ranked'))}{item}"


def _at_k(every: bool) -> Callable[[str, Spec, Record, Mapping[str, Record]], str]:
    def sentence(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
        k = spec.get("k")
        how = f"every name in its {_field(spec.get('gold'))} is" if every else f"at least one name in its {_field(spec.get('gold'))} is"
        word = "every" if every else "any"
        return (
            f"{word}@{k} over the rows of {_code(spec.get('rows'))}: a row counts when {how} among the first {k} of its "
            f"{_ranked(spec)}{_rows_common(spec)}. Counted: {_shown(record)}."
        )

    return sentence


def _count(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    where = _and([f"{_field(p)} is {_code(v)}" for p, v in spec.get("where", {}).items()])
    return f"The rows of {_code(spec.get('rows'))} where {where}{_rows_common(spec)}. Counted: {_shown(record)}."


def _read(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    row = f", in the row {_code(spec['row'])}" if "row" in spec else ""
    of = spec.get("of")
    out_of = "" if of is None else (f", out of {_field(of)}" if isinstance(of, str) else f", out of {of}")
    return f"Read from {_code(spec.get('file'))}, field {_field(spec.get('pointer'))}{row}{out_of}: {_shown(record)}."


def _mcnemar(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    a, b = str(spec.get("a")), str(spec.get("b"))
    parts = record.get("parts", {})
    a_only, b_only, diff = (_shown(parts.get(p)) for p in ("a_only", "b_only", "diff"))
    return (
        f"McNemar's exact two-sided test of {_label(a, figures)} against {_label(b, figures)}, over the rows both count: "
        f"b = {a_only} rows only {_code(a)} hit, c = {b_only} only {_code(b)}; the net gain is {diff}, and p is {record.get('text')}."
    )


def _holm(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    family = [str(f) for f in spec.get("family", [])]
    alpha = spec.get("alpha", 0.05)
    adjusted = record.get("parts", {})
    each = _and([f"{_code(f)} {_shown(adjusted.get(f))}" for f in family])
    return (
        f"Holm's step-down adjustment over the family of {len(family)} p-values ({_and([_code(f) for f in family])}), "
        f"at alpha {alpha}: {_shown(record)} at or below it. Adjusted: {each}."
    )


def _rrf(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    k = spec.get("k", 60)
    lists = []
    for entry in spec.get("lists", []):
        depth = f", its first {entry['depth']}" if "depth" in entry else ""
        item = f" (each entry's {_field(entry['item'])})" if "item" in entry else ""
        lists.append(f"{_field(entry.get('ranked'))}{item} of {_code(entry.get('rows'))} at weight {entry.get('weight')}{depth}")
    fusion = (
        f"Reciprocal rank fusion at k = {k} of {_and(lists)}: each name gets, from each list it is in, the list's weight "
        f"divided by (k + its rank there), and an exact tie goes to the list named first"
    )
    if spec.get("count") == "tie_across":
        at = spec.get("at")
        what = f"the rows of {_code(spec.get('rows'))} whose fused scores at ranks {at} and {at + 1 if isinstance(at, int) else '?'} tie exactly"
    else:
        item = f" (each entry's {_field(spec['item'])})" if "item" in spec else ""
        what = f"the rows of {_code(spec.get('rows'))} whose stored {_field(spec.get('stored'))}{item} is the fusion's top {spec.get('n', 10)}"
    return f"{fusion}. Counted: {what}{_rows_common(spec)}: {_shown(record)}."


def _group_by(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    members = _and([_label(str(f), figures) for f in spec.get("figures", [])])
    source = f" of {_code(spec['rows'])}" if "rows" in spec else " of the first figure's rows"
    return f"{members}, each counted again within each group of rows sharing a value of {_field(spec.get('by'))}{source}: {record.get('text')} groups."


def _other(name: str, spec: Spec, record: Record, figures: Mapping[str, Record]) -> str:
    keys = ", ".join(f"{key} {_code(value)}" for key, value in spec.items() if key not in ("recount", "about", "label", "format", "equals"))
    return f"Counted by the recount {_code(spec.get('recount'))}" + (f" ({keys})" if keys else "") + f": {_shown(record)}."


SENTENCES: dict[str, Callable[[str, Spec, Record, Mapping[str, Record]], str]] = {
    "every_at_k": _at_k(every=True),
    "any_at_k": _at_k(every=False),
    "count": _count,
    "read": _read,
    "mcnemar_exact": _mcnemar,
    "holm": _holm,
    "rrf": _rrf,
    "group_by": _group_by,
}


def _label(name: str, figures: Mapping[str, Record]) -> str:
    record = figures.get(name)
    spec = record.get("spec", {}) if isinstance(record, Mapping) else {}
    label = label_of(name, spec)
    return f"{label} ({_code(name)})" if label != name.replace("_", " ") else _code(name)


def derivations(figures: Mapping[str, Record]) -> list[dict[str, Any]]:
    """Each stored figure (provenance.json's ``figures``) as ``{name, label, labelled, about, text, bare}``.

    ``text`` is Markdown: what the figure reads and how it is counted; ``bare`` marks a figure
    whose definition says nothing more than its value.
    """
    # A figure another one must equal is checked by that one: only the rest stand on their value.
    checked = {str(r.get("spec", {}).get("equals", "")).split(".", 1)[0] for r in figures.values()}
    out = []
    for name, record in figures.items():
        spec = record.get("spec", {})
        recount = str(spec.get("recount", ""))
        text = SENTENCES.get(recount, _other)(name, spec, record, figures)
        if "equals" in spec:
            text += f" It must equal {_code(spec['equals'])} (checked)."
        bare = recount == "read" and "equals" not in spec and name not in checked
        about = spec.get("about")
        out.append(
            {
                "name": name,
                "label": label_of(name, spec),
                "labelled": isinstance(spec.get("label"), str),
                "about": about if isinstance(about, str) else None,
                "text": text,
                "bare": bare,
            }
        )
    return out
