"""A kit.yaml with one typo in its figures, page texts or keys, run through the command line: exit 2,
the typo's own line, the nearest valid name, and nothing written (issue 40, 'first steps').

Each case edits the small figure bench's kit.yaml once; ``@`` in what it must say stands for the
line and column of the edited text's typo (``at``), found in the file as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from figkit import write_bench

# name: (text in kit.yaml, its replacement, the word of the replacement the message points at, the message)
CASES = {
    "a recount misspelt": (
        "recount: every_at_k", "recount: every_at_5", "every_at_5",
        "@: figures.hits.recount: no such recount: 'every_at_5'; did you mean 'every_at_k'? "
        "The recounts here are: read, count, every_at_k, any_at_k, group_by, mcnemar_exact, holm, rrf",
    ),
    "a recount's key misspelt": (
        "    rows: bench-2026/run/rows.ndjson\n", "    rowz: bench-2026/run/rows.ndjson\n", "rowz",
        "@: figures.hits.rowz: unknown key; did you mean 'rows'? The keys allowed here are: about, agrees_with, equals, format, "
        "gold, item, k, key, label, ranked, recount, rows, skip (recount 'every_at_k'; see docs/figures.md)",
    ),
    "a key every figure has, misspelt": (
        "    about: Hits by", "    abut: Hits by", "abut",
        "@: figures.by_type.abut: unknown key; did you mean 'about'? The keys allowed here are: about, by, equals, figures, "
        "format, key, label, order, recount, rows (recount 'group_by'; see docs/figures.md)",
    ),
    "a figure it is computed from, misspelt": (
        "a: other_hits", "a: other_hitz", "other_hitz",
        "@: figures.other_vs_hits.a: no figure is called 'other_hitz'; did you mean 'other_hits'? "
        "The figures are: by_type, hits, other_hits, other_vs_hits, stored_hits, tsv_hits",
    ),
    "a part equals names, misspelt": (
        "equals: hits", "equals: other_vs_hits.a_onyl", "other_vs_hits.a_onyl",
        "@: figures.stored_hits.equals: figure 'other_vs_hits' has no part 'a_onyl'; did you mean 'a_only'? "
        "Its parts are: a_hits, b_hits, a_only, b_only, diff",
    ),
    "a part of a figure without parts": (
        "equals: hits", "equals: hits.total", "hits.total",
        "@: figures.stored_hits.equals: figure 'hits' has no part 'total'; it has no parts: compare with the figure itself",
    ),
    "a page text's figure, misspelt": (
        "Hits: {{ hits }}", "Hits: {{ hitz }}", "'Hits",
        "@: readme.figures_table[0].page: names 'hitz', which is not a figure; did you mean 'hits'?",
    ),
    "a page text's part, misspelt": (
        "{{ stored_hits.of }}", "{{ stored_hits.off }}", "'The stored",
        "@: readme.figures_table[1].page: names something that is not a figure or a part of one: "
        "figure 'stored_hits' has no part 'off'; did you mean 'of'?",
    ),
    "a page text's filter, misspelt": (
        "{{ stored_hits.of }}", "{{ stored_hits.of|thousandz }}", "'The stored",
        "@: readme.figures_table[1].page: there is no filter 'thousandz'; did you mean 'thousands'? There are 56 filters here.",
    ),
    "prose citing a part no figure has": (
        "kit: figure-kit", "kit: figure-kit\nsummary: 'We hit {{ hits.off }}'", "'We hit",
        "@: summary: names something that is not a figure or a part of one: figure 'hits' has no part 'off'; did you mean 'of'?",
    ),
    "a top-level key misspelt": (
        "kit: figure-kit", "kit: figure-kit\nlicense: CC0-1.0", "license",
        "@: license: unknown key; did you mean 'licence'? The keys allowed here are: allow, authors, date, external_digests, figures, "
        "kit, licence, out, rai, readme, rules, sources, summary, title, url, version. See docs/config.md, 'Every key'.",
    ),
    "a readme key misspelt": (
        "readme:\n", "readme:\n  templte: page.j2\n", "templte",
        "@: readme.templte: unknown key; did you mean 'template'? The keys allowed here are: figures_table, not_here, template. "
        "See docs/config.md, 'Every key'.",
    ),
}


def _place(text: str, word: str) -> str:
    for number, line in enumerate(text.splitlines(), 1):
        if word in line:
            return f"kit.yaml:{number}:{line.index(word) + 1}"
    raise AssertionError(f"{word!r} is not in kit.yaml")


@pytest.mark.parametrize("old, new, word, says", list(CASES.values()), ids=list(CASES))
def test_a_typo_is_refused_at_its_line_with_the_nearest_name(bench: Path, cli, old: str, new: str, word: str, says: str) -> None:
    config = write_bench(bench)
    text = config.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    config.write_text(text)
    result = cli("build")
    assert (result.exit_code, result.stderr) == (2, "kitbuild: " + says.replace("@", _place(text, word)) + "\n")
    assert not (bench / "kit").exists()
