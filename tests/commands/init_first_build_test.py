"""The first build after ``kitbuild init``: it succeeds, or it says exactly what to add.

Each bench here is made up to take one path of the walkthrough (docs/walkthrough.md): records
with nothing private, records that print a path naming no folder here and a machine name,
records with an e-mail address no rule can rewrite, and a compressed log that prints a private path.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

from kitbuild.commands.init import init, init_text

from kittest import make_files

PLAIN = {"run1": {"scores.tsv": "q\tscore\n1\t0.5\n2\t0.7\n", "settings.json": '{"model": "bm25", "k": 10}\n'}}
PRIVATE_PATH = "/home/ada/old-bench/data"


def _home_bench(root: Path) -> None:
    make_files(root, {"run2": {
        "run.json": f'{{"input": "{PRIVATE_PATH}/q.jsonl", "out": "{root}/run2/out.txt"}}\n',
        "out.txt": "x\n",
        "lock.yaml": "host: node7.lab.example.org\nmodel: x\n",
        "logs": {"a.log": "started on node7\n"},
    }})


def test_a_bench_with_nothing_private_builds_at_once_with_no_warning(bench, cli):
    make_files(bench / "plain", PLAIN)
    report = init(["plain"], date="2026-12-01")
    assert init_text(report, "kit.yaml").splitlines()[-1] == (
        "next: read kit.yaml (a licence and each folder's 'about' are yours to add), then run 'kitbuild build --dry-run kit.yaml'")
    text = (bench / "kit.yaml").read_text()
    # No rule that would fire nowhere (every build would warn about it, KB906).
    assert "  # - use: record-path-to-kit-path  # no record prints a path to map (a system one, /usr/…, needs none): add it if one ever does\n" in text
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stdout
    assert sorted(os.listdir(bench / "kit" / "plain" / "run1")) == ["scores.tsv", "settings.json"]


def test_a_first_build_names_every_value_to_write_then_builds(bench, cli):
    _home_bench(bench / "home")
    init(["home"], date="2026-12-01")
    text = (bench / "kit.yaml").read_text()
    lines = text.splitlines()
    result = cli("build", "--dry-run")
    assert result.exit_code == 2 and result.stdout == ""
    at = {name: lines.index(next(line for line in lines if line.strip().startswith(name))) + 1 for name in (f"{PRIVATE_PATH}:", "node7.lab", "node7:")}
    assert result.stderr == (
        "kitbuild: kit.yaml: 3 values marked FILL IN are still empty; write each one in:\n"
        f"  kit.yaml:{at[PRIVATE_PATH + ':']}:35: rules[0].with.map[key #1]: the kit path this printed path stands for; "
        "or delete the entry and exclude the records that print it\n"
        f"  kit.yaml:{at['node7.lab']}:32: rules[1].with.names[key #1]: the role this machine played: a public word, such as desktop\n"
        f"  kit.yaml:{at['node7:']}:16: rules[1].with.names[key #2]: the role this machine played: a public word, such as desktop\n"
        "Then run 'kitbuild build --dry-run' again.\n"
    )
    assert PRIVATE_PATH not in result.stderr and "node7" not in result.stderr and str(bench) not in result.stderr
    assert sorted(os.listdir(bench)) == ["home", "kit.yaml"]
    # Written in as the message asks: the build passes.
    text = text.replace(f'{PRIVATE_PATH}: ""', f"{PRIVATE_PATH}: old-bench/data")
    (bench / "kit.yaml").write_text(re.sub(r'""  # FILL IN: the role.*', "lab-node", text))
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert (bench / "kit/home/run2/run.json").read_text() == '{"input": "old-bench/data/q.jsonl", "out": "home/run2/out.txt"}\n'
    assert (bench / "kit/home/run2/lock.yaml").read_text() == "host: lab-node\nmodel: x\n"


def test_a_bench_copied_from_windows_builds_once_its_map_entry_is_written_in(bench, cli):
    # The records print the Windows paths of the machine they ran on: their own folder, and one
    # that is not here, as JSON writes them (each '\' doubled) and with '/'.
    make_files(bench / "win", {"run3": {
        "run.json": '{"out": "C:\\\\Users\\\\ada\\\\bench\\\\run3\\\\out.txt", "data": "D:/corpora/v2/q.jsonl"}\n',
        "out.txt": "x\n",
    }})
    init(["win"], date="2026-12-01")
    text = (bench / "kit.yaml").read_text()
    assert '        "C:\\\\Users\\\\ada\\\\bench": win\n' in text
    assert '        "D:\\\\corpora\\\\v2": ""\n' in text
    (bench / "kit.yaml").write_text(text.replace('"D:\\\\corpora\\\\v2": ""', '"D:\\\\corpora\\\\v2": corpus'))
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert (bench / "kit/win/run3/run.json").read_text() == '{"out": "win\\\\run3\\\\out.txt", "data": "corpus/q.jsonl"}\n'
    assert "Users" not in result.stdout and "corpora" not in result.stdout


def test_what_no_rule_rewrites_is_named_with_what_to_add(bench, cli):
    make_files(bench / "mail", {"r": {"notes.yaml": "contact: ada@lab.example.org\n", "rows.tsv": "q\tnode\n1\tgpu-3\n"}})
    report = init(["mail"], date="2026-12-01")
    assert report.leaks == 1
    text = (bench / "kit.yaml").read_text()
    assert "#   KB502 mail/r/notes.yaml:1: column 10: an e-mail address\n" in text
    (bench / "kit.yaml").write_text(re.sub(r'""  # FILL IN: the role.*', "lab-node", text))
    result = cli("build", "--dry-run")
    assert result.exit_code == 1, result.stderr
    assert result.stdout.splitlines()[-4:-1] == [
        "the build would be stopped: 1 finding",
        "  KB502 mail/r/notes.yaml:1: column 10: an e-mail address that the allow list in kit.yaml does not cover",
        "KB502: add an 'allow' entry for the address with its reason (a public contact), a rule that rewrites it, or exclude the file.",
    ]
    assert "ada@" not in result.stdout


def test_a_private_path_inside_a_compressed_record_is_named_with_how_to_settle_it(bench, cli):
    # What docs/walkthrough.md shows: init lists it, the dry run stops on it and says to
    # decompress the file in the bench, where the rules reach it.
    log = gzip.compress(b"epoch 1\nloading /home/ada/data/q.jsonl\nepoch 2\n", mtime=0)
    make_files(bench / "logs", {"r": {"train.log.gz": log, "scores.tsv": "q\tscore\n1\t0.5\n"}})
    report = init(["logs"], date="2026-12-01")
    assert report.leaks == 1
    finding = "KB902 logs/r/train.log.gz: in its gzip content at line 2, column 9: a private path (/home/…)"
    assert f"#   {finding}\n" in (bench / "kit.yaml").read_text()
    result = cli("build", "--dry-run")
    assert result.exit_code == 1, result.stderr
    assert result.stdout.splitlines()[-4:] == [
        "the build would be stopped: 1 finding",
        f"  {finding} that the allow list in kit.yaml does not cover",
        "KB902: add a map entry that rewrites the path, exclude the file, or, for a path that names no person or machine, an 'allow' entry with its reason.",
        "A rule never rewrites inside compressed data (a compressed file, or a tar holding one, is copied as it is, and base64 is not decoded): decompress it in the bench, so the rules rewrite what it holds, or exclude the file.",
    ]
    walkthrough = (Path(__file__).parents[2] / "docs" / "walkthrough.md").read_text(encoding="utf-8")
    assert "\n".join(result.stdout.splitlines()[-4:]) in walkthrough
