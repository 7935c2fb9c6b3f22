"""kitbuild build with figures: counted from the rewritten kit, stored in provenance.json, printed
on the pages; a figure the kit cannot back stops the build with its name (issue 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitbuild import build
from kitbuild.errors import ConfigError
from kitbuild.figures import FigureCheckError, FigureError, FigureSpecError

from figkit import AS, FIGURES, ROWS, TABLE, write_bench
from kittest import read_tree

WHERE_SECTION = """\
## Where each figure on the page comes from

| On the page | File here | Fields |
|---|---|---|
| Hits: 3 of 5; the other arm 4, +1, p 1 | `bench-2026/run/rows.ndjson`, `bench-2026/run/other.ndjson` | `search`, `gold`, `abstention`, `score.all@5` |
| The stored count: 3 \\| of 5 | `bench-2026/score/summary.json` | `counts.every@5` |

Each figure was computed from the files named beside it when the kit was built, never typed;
`provenance.json` holds how each is counted and its value, and `kitbuild verify` recounts every one
from this folder alone.

"""

TYPE_SECTION = """\
## Hits by question type

| type | rows | hits | other hits |
|---|---:|---:|---:|
| b | 3 | 1 of 2 | 2 of 2 |
| a | 3 | 2 of 3 | 2 of 3 |

## The files
"""


def test_the_readme_says_where_each_figure_comes_from(bench: Path) -> None:
    write_bench(bench)
    build("kit.yaml", jobs=1)
    readme = (bench / "kit" / "README.md").read_text()
    assert WHERE_SECTION in readme
    assert TYPE_SECTION in readme
    # Between them, how each figure was counted (its columns above are labelled from its name).
    assert readme.index(WHERE_SECTION) < readme.index("## How the figures were counted") < readme.index(TYPE_SECTION)
    assert readme.index("checks everything else this README says.") < readme.index("## Where each figure")
    html = (bench / "kit" / "index.html").read_text()
    assert '<h2 id="where">Where each figure on the page comes from</h2>' in html
    assert "<tr><td>Hits: 3 of 5; the other arm 4, +1, p 1</td>" in html
    assert '<tr><td>b</td><td class="n">3</td><td class="n">1 of 2</td><td class="n">2 of 2</td></tr>' in html


def test_provenance_stores_each_spec_value_and_text(bench: Path) -> None:
    write_bench(bench)
    build("kit.yaml", jobs=1)
    provenance = json.loads((bench / "kit" / "provenance.json").read_bytes())
    assert list(provenance["figures"]) == list(FIGURES)
    assert provenance["figures"]["hits"] == {"spec": FIGURES["hits"], "value": 3, "text": "3", "of": {"value": 5, "text": "5"}}
    assert provenance["figures"]["other_vs_hits"]["parts"]["diff"] == {"value": 1, "text": "+1"}
    assert provenance["figures_table"] == TABLE


def test_a_kit_without_figures_stores_empty_ones_and_prints_no_section(bench: Path) -> None:
    write_bench(bench, figures={}, table=[])
    build("kit.yaml", jobs=1)
    provenance = json.loads((bench / "kit" / "provenance.json").read_bytes())
    assert (provenance["figures"], provenance["figures_table"]) == ({}, [])
    assert "## Where each figure" not in (bench / "kit" / "README.md").read_text()


def test_a_users_template_prints_figures_by_name(bench: Path) -> None:
    (bench / "page.j2").write_text("# {{ title }}\n\nBM25: {{ figures.hits }} of {{ figures.hits.of }}, {{ figures.other_vs_hits.diff }}.\n")
    write_bench(bench)
    text = (bench / "kit.yaml").read_text().replace("readme:\n", "readme:\n  template: page.j2\n")
    (bench / "kit.yaml").write_text(text)
    build("kit.yaml", jobs=1)
    assert (bench / "kit" / "README.md").read_text() == "# A kit with figures\n\nBM25: 3 of 5, +1.\n"


def _nothing_written(bench: Path) -> None:
    # The staging folder sits beside the target; build's finally removes it.
    assert sorted(p.name for p in bench.iterdir()) == ["kit.yaml", "src"]


def test_a_figure_over_a_missing_file_stops_the_build(bench: Path, cli) -> None:
    write_bench(bench, figures={"hits": {**FIGURES["hits"], "rows": f"{AS}/run/gone.ndjson"}}, table=[])
    result = cli("build")
    assert result.exit_code == 1
    assert result.stderr == f"kitbuild: figure 'hits' cannot be computed: {AS}/run/gone.ndjson: no such file in the kit\n"
    _nothing_written(bench)


def test_a_figure_over_a_bad_pointer_stops_the_build(bench: Path, cli) -> None:
    write_bench(bench, figures={"hits": {**FIGURES["hits"], "ranked": "/ranked"}}, table=[])
    result = cli("build")
    assert result.exit_code == 1
    assert result.stderr == f"kitbuild: figure 'hits' cannot be computed: {ROWS}:1: /ranked does not resolve: no key 'ranked' at the top level\n"
    _nothing_written(bench)


def test_a_check_that_does_not_hold_stops_the_build(bench: Path) -> None:
    stored = {**FIGURES["stored_hits"], "pointer": "/counts/answerable", "of": 5}
    write_bench(bench, figures={"hits": FIGURES["hits"], "stored_hits": stored}, table=[])
    with pytest.raises(FigureCheckError) as caught:
        build("kit.yaml", jobs=1)
    assert caught.value.exit_code == 1
    assert caught.value.message == "1 figure check did not hold:\n  stored_hits: equals hits does not hold: stored_hits is 5 of 5, hits is 3 of 5"
    _nothing_written(bench)


def test_a_figure_reads_record_files_only(bench: Path) -> None:
    write_bench(bench, figures={"n": {"recount": "read", "file": "index.json", "pointer": "/kit"}}, table=[])
    with pytest.raises(FigureError) as caught:
        build("kit.yaml", jobs=1)
    assert caught.value.message == "figure 'n' cannot be computed: index.json: is written by the build, not a record file; a figure reads record files only"


def test_a_source_path_named_as_a_kit_path_is_not_printed(bench: Path) -> None:
    # 'src/run' is how kit.yaml spells the private source; the kit calls it bench-2026/run.
    (bench / "src").mkdir()
    write_bench(bench, figures={"hits": {**FIGURES["hits"], "rows": "src/run/rows.ndjson"}}, table=[], sources=[{"path": "./src/run", "as": "run"}])
    with pytest.raises(FigureError) as caught:
        build("kit.yaml", jobs=1)
    assert "src/run" not in caught.value.message
    assert caught.value.message == "figure 'hits' cannot be computed: [the path of sources[0] as kit.yaml gives it]/rows.ndjson: no such file in the kit"


def test_a_dry_run_stops_where_the_build_would_and_writes_nothing(bench: Path) -> None:
    # A dry run is the build in a scratch folder: a figure its files cannot back stops it too.
    write_bench(bench, figures={"hits": {**FIGURES["hits"], "rows": f"{AS}/run/gone.ndjson"}}, table=[])
    with pytest.raises(FigureError):
        build("kit.yaml", dry_run=True, jobs=1)
    _nothing_written(bench)


def test_a_page_text_naming_no_figure_is_a_config_error(bench: Path) -> None:
    write_bench(bench, table=[{"page": "{{ hits }} and {{ hitz }}", "files": [ROWS]}])
    with pytest.raises(ConfigError) as caught:
        build("kit.yaml", jobs=1)
    assert caught.value.exit_code == 2
    line = (bench / "kit.yaml").read_text().splitlines().index("  - page: '{{ hits }} and {{ hitz }}'") + 1
    assert caught.value.message == (
        f"kit.yaml:{line}:11: readme.figures_table[0].page: names 'hitz', which is not a figure; did you mean 'hits'?"
    )


def test_a_page_text_naming_no_part_stops_at_its_line(bench: Path) -> None:
    write_bench(bench, table=[{"page": "{{ other_vs_hits.gain }}", "files": [ROWS]}])
    with pytest.raises(FigureSpecError) as caught:
        build("kit.yaml", jobs=1)
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith("kit.yaml:")
    assert ": readme.figures_table[0].page: names something that is not a figure or a part of one: " in caught.value.message
    _nothing_written(bench)


def test_a_bad_figure_spec_is_a_config_error_at_its_line(bench: Path, cli) -> None:
    write_bench(bench, figures={"hits": {**FIGURES["hits"], "k": 0}}, table=[])
    line = (bench / "kit.yaml").read_text().splitlines().index("    k: 0") + 1
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == f"kitbuild: kit.yaml:{line}:8: figures.hits.k: 0 is too small; k (how many of the top of the ranked list to look at) is a whole number, 1 or more\n"


def test_a_figure_key_that_is_not_a_name_is_shown_by_position(bench: Path, cli) -> None:
    write_bench(bench, figures={"hits": FIGURES["hits"], "/scratch/u7/rows": FIGURES["hits"]}, table=[])
    result = cli("build")
    assert result.exit_code == 2
    assert "/scratch" not in result.stderr
    assert "figures[key #2]: cannot name a figure" in result.stderr


def test_the_same_bench_builds_the_same_bytes(bench: Path, tmp_path: Path) -> None:
    write_bench(bench)
    build("kit.yaml", jobs=1)
    first = read_tree(bench / "kit")
    build("kit.yaml", tmp_path / "again", jobs=2)
    assert read_tree(tmp_path / "again") == first


def test_prose_naming_a_part_no_figure_has_stops_the_build_at_its_line(bench: Path, cli) -> None:
    # Parts are known once the figures are counted: the build then renders the prose, so the
    # mistake is the config's (exit 2, at its line), not a page that cannot be rendered (exit 1).
    write_bench(bench, summary="We hit {{ hits.off }} questions.")
    line = next(n for n, text in enumerate((bench / "kit.yaml").read_text().splitlines(), 1) if text.startswith("summary:"))
    result = cli("build")
    assert (result.exit_code, result.stderr) == (2, f"kitbuild: kit.yaml:{line}:10: summary: names something that is not a figure or a part of one: figure 'hits' has no part 'off'; did you mean 'of'?\n")
    _nothing_written(bench)


def test_a_private_path_a_stopped_build_would_quote_is_said_as_what_it_is(bench: Path, cli) -> None:
    # A figures_table field that is a private path kit.yaml does not list: the build stops on it
    # (KB708, and the gate finds it in provenance.json), and neither finding prints it.
    table = [{**TABLE[1], "fields": ["counts.every@5", "/scratch/u7/runs/q.json", "ada@uni.example.edu"]}]
    write_bench(bench, table=table)
    result = cli("build")
    assert result.exit_code == 1
    assert "KB708 provenance.json: figures_table[0]: names the field '[a private path]', which none of its files has" in result.stderr
    assert "names the field '[an e-mail address]'" in result.stderr
    said = result.stdout + result.stderr
    assert "u7" not in said and "runs/q.json" not in said and "ada@" not in said


POINTER_ROWS = (
    '{"qid": "q1", "data": {"search": ["a", "b"], "gold": ["a"]}, "home": {"skip": false}}\n'
    '{"qid": "q2", "data": {"search": ["c"], "gold": ["a"]}, "home": {"skip": false}}\n'
)
POINTER_CONFIG = """\
kit: pointers
title: pointers
date: 2026-12-01
sources:
  - {path: src, as: r}
figures:
  n: {recount: read, file: r/a.json, pointer: /data/n, of: /data/of}
  hits: {recount: every_at_k, rows: r/rows.ndjson, ranked: /data/search, gold: /data/gold, k: 5, skip: /home/skip%s}
readme:
  figures_table:
    - {page: "n {{ n }} hits {{ hits }}", files: [r/a.json, r/rows.ndjson], fields: [/data/n, /home/skip]}
"""


def _pointer_bench(bench: Path, about: str = "", record: str = "") -> None:
    (bench / "src").mkdir()
    (bench / "src" / "rows.ndjson").write_text(POINTER_ROWS)
    (bench / "src" / "a.json").write_text('{"data": {"n": 5, "of": 9}}\n')
    if record:
        (bench / "src" / "notes.txt").write_text(record)
    (bench / "kit.yaml").write_text(POINTER_CONFIG % about)


def test_a_figure_pointer_that_reads_like_a_private_path_is_no_leak(bench: Path, cli) -> None:
    # '/data/n' and '/home/skip' name keys of the kit's records; provenance.json stores them and
    # the pages print them. The gate passes them there, and verify does too.
    _pointer_bench(bench)
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert b'"pointer": "/data/n"' in (bench / "kit" / "provenance.json").read_bytes()
    assert "`/data/n`, `/home/skip`" in (bench / "kit" / "README.md").read_text()
    assert cli("verify", "kit").exit_code == 0


@pytest.mark.parametrize(
    "about, record, where",
    [
        # The same text as free words of a figure, and in a record: a path, as ever.
        (', about: "rows under /data/n"', "", ["README.md", "index.html", "provenance.json"]),
        ("", "see /data/n\n", ["r/notes.txt"]),
        # Not the pointer, but a longer path it begins.
        (', about: "/data/nancy"', "", ["README.md", "index.html", "provenance.json"]),
    ],
    ids=["about", "record", "longer"],
)
def test_the_same_text_elsewhere_is_still_a_leak(bench: Path, cli, about: str, record: str, where: list[str]) -> None:
    _pointer_bench(bench, about, record)
    result = cli("build")
    assert result.exit_code == 1
    assert sorted({line.split()[1].split(":")[0] for line in result.stderr.splitlines() if line.startswith("KB902 ")}) == where
