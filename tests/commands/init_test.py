"""kitbuild init: a starter kit.yaml from bench folders, that builds once the roles are filled in."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from kitbuild.commands.build import build
from kitbuild.commands.init import init
from kitbuild.config import load_config
from kitbuild.errors import ConfigError
from kitbuild.scan import _group_unresolved, host_names, scan_bench

ROWS = '{"qid": "q1", "search": ["s01"]}\n'
LOCK = json.dumps({"route": "http://gpu-b17.cluster.example.net:11434/api/embed", "card": "RTX 4090"}) + "\n"


def small_bench(root: Path) -> Path:
    """Two folders whose records print their own paths, another machine's paths, a box name and digests."""
    files = {
        "lme/a0/run/rows.ndjson": ROWS,
        "lme/w7/fuse.json": json.dumps(
            {
                "rows": "/scratch/u7/runs/lme/a0/run/rows.ndjson",
                "rows_sha256": hashlib.sha256(ROWS.encode()).hexdigest(),
                "out": "/scratch/u7/runs/lme/w7",
            }
        )
        + "\n",
        "ls/run/lock.json": LOCK,
        "ls/score/reading.json": json.dumps(
            {"lock": f"{root}/ls/run/lock.json", "lock_sha256": "sha256:" + hashlib.sha256(LOCK.encode()).hexdigest()}
        )
        + "\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


EXPECTED = """\
# kit.yaml for bench, written by 'kitbuild init'. This file is private: it names the bench's
# folders, the paths its records print and its machines. Before the first build:
#   1. replace every empty value marked FILL IN (kitbuild refuses the config until each is filled);
#   2. read the comments beside each proposal, and the leak-gate notes at the end;
#   3. run 'kitbuild build --dry-run' and read what each rule would change.
# Every key is described in docs/config.md; 'kitbuild schema config' prints the schema.
kit: bench
title: "bench: the data kit"
date: "2026-11-09"  # the only date that may enter the kit
# licence: CC-BY-4.0  # the licence of the kit's records and pages
out: ./kit
sources:
  - path: lme  # 2 files
    as: lme
    # about: "..."  # the README's line for this folder
  - path: ls  # 2 files
    as: ls
    # about: "..."  # the README's line for this folder
rules:
  - use: record-path-to-kit-path
    with:
      map:
        # the folder published as lme: printed 2 times in 1 file:
        #   lme/w7/fuse.json: 2
        /scratch/u7/runs/lme: lme
  - use: box-name-to-role
    with:
      names:
        # in route: printed 1 time in 1 file:
        #   ls/run/lock.json: 1
        gpu-b17.cluster.example.net: ""  # FILL IN: the role this machine played, e.g. desktop
        # the short form of gpu-b17.cluster.example.net
        gpu-b17: ""  # FILL IN: the role this machine played, e.g. desktop
      # fields: [route]  # to rewrite these names only inside those fields
  - use: digest-withheld
    with:
      placeholder: withheld-2026-11-09

# The leak gate: with every proposal above filled in, no record holds a private-path shape it would stop on.
"""


def fill_roles(text: str, role: str = "desktop") -> str:
    return re.sub(r'""  # FILL IN: the role this machine played.*', role, text)


def test_init_writes_the_expected_starter_config(bench: Path, cli) -> None:
    small_bench(bench)
    result = cli("init", "lme", "ls", "--date", "2026-11-09")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "wrote kit.yaml: 2 sources, 1 map entry, 2 machine names, 0 external digests\n"
        "  2 values to fill in (marked FILL IN): 2 roles\n"
        "next: write in the 2 values marked FILL IN, then run 'kitbuild build --dry-run kit.yaml'\n"
    )
    assert (bench / "kit.yaml").read_text() == EXPECTED


def test_unfilled_config_is_refused_at_the_fill_in_line(bench: Path) -> None:
    small_bench(bench)
    init(["lme", "ls"], date="2026-11-09")
    with pytest.raises(ConfigError) as info:
        load_config("kit.yaml")
    line = EXPECTED.splitlines().index('        gpu-b17.cluster.example.net: ""  # FILL IN: the role this machine played, e.g. desktop') + 1
    # Every value still to write, each at its line, with what it asks for: all at once.
    assert info.value.message == (
        "kit.yaml: 2 values marked FILL IN are still empty; write each one in:\n"
        f"  kit.yaml:{line}:38: rules[1].with.names[key #1]: the role this machine played: a public word, such as desktop\n"
        f"  kit.yaml:{line + 2}:18: rules[1].with.names[key #2]: the role this machine played: a public word, such as desktop\n"
        "Then run 'kitbuild build --dry-run' again."
    )


def test_filled_in_config_builds_and_rewrites_everything(bench: Path) -> None:
    small_bench(bench)
    init(["lme", "ls"], date="2026-11-09")
    (bench / "kit.yaml").write_text(fill_roles((bench / "kit.yaml").read_text()))
    report = build("kit.yaml", jobs=1)
    totals = {r["name"]: r["total"] for r in report.rules}
    assert totals == {"record-path-to-kit-path": 3, "box-name-to-role": 1, "digest-withheld": 1}
    fuse = json.loads((bench / "kit/lme/w7/fuse.json").read_text())
    assert fuse["rows"] == "lme/a0/run/rows.ndjson" and fuse["out"] == "lme/w7"
    assert "desktop:11434" in (bench / "kit/ls/run/lock.json").read_text()


def test_init_on_the_synthetic_bench_builds_once_roles_are_filled(tmp_path: Path) -> None:
    synthetic = importlib.import_module("kitbuild.synthetic")
    generate_bench = getattr(synthetic, "generate_bench", None)
    if generate_bench is None:
        pytest.skip("the synthetic bench generator has not landed")
    shipped = load_config(generate_bench(tmp_path / "demo"))
    folders = [s.path for s in shipped.sources]
    config = tmp_path / "kit.yaml"
    report = init(folders, config, date=shipped.date)
    text = config.read_text()
    assert report.maps_to_fill == 0 and report.digests == len(shipped.external_digests)
    # The researcher fills in the roles and says what each external digest is.
    text = fill_roles(text)
    text = re.sub(r'""  # FILL IN: what this file is.*', '"a public file"', text)
    config.write_text(text)
    assert "FILL IN:" not in text.replace("# FILL IN: the kit path", "")
    result = build(config, tmp_path / "kit", jobs=1)
    assert {r["name"] for r in result.rules} == {"record-path-to-kit-path", "box-name-to-role", "digest-withheld"}


def test_a_path_that_names_nothing_here_is_left_to_fill_in(bench: Path) -> None:
    small_bench(bench)
    (bench / "ls/score/smoke.json").write_text(
        json.dumps({"a": "/scratch/u7/smoke-3/x/a.json", "b": "/scratch/u7/smoke-3/y/b.json"}) + "\n"
    )
    init(["lme", "ls"], date="2026-11-09")
    text = (bench / "kit.yaml").read_text()
    assert (
        "        # names no file or folder here: printed 2 times in 1 file:\n"
        "        #   ls/score/smoke.json: 2\n"
        "        # FILL IN: the kit path it stands for; or, if these files are not published, delete this\n"
        "        # entry and exclude the records that print it (the leak gate reports what is left).\n"
        '        /scratch/u7/smoke-3: ""\n'
    ) in text
    with pytest.raises(ConfigError, match=r"rules\[0\]\.with\.map"):
        load_config("kit.yaml")


def test_digests_of_no_file_here_are_listed_as_external(bench: Path) -> None:
    small_bench(bench)
    outside = hashlib.sha256(b"the public dataset").hexdigest()
    (bench / "lme/run.json").write_text(json.dumps({"dataset_sha256": outside.upper()}) + "\n")
    init(["lme", "ls"], date="2026-11-09")
    text = (bench / "kit.yaml").read_text()
    assert (
        "external_digests:\n"
        "  # printed 1 time in 1 file:\n"
        "  #   lme/run.json: 1\n"
        f'  {outside}: ""  # FILL IN: what this file is'
    ) in text
    # Digests of files that are here (rows.ndjson, lock.json) are not proposed.
    assert text.count("external_digests") == 1 and hashlib.sha256(ROWS.encode()).hexdigest() not in text


def test_leak_gate_findings_no_proposal_covers_are_commented(bench: Path) -> None:
    small_bench(bench)
    (bench / "ls/notes.txt").write_text("plots in file:///plots\nasked ada.l@uni.example.edu\n")
    report = init(["lme", "ls"], date="2026-11-09")
    text = (bench / "kit.yaml").read_text()
    assert report.leaks == 2
    assert (
        "#   KB902 ls/notes.txt:1: column 10: a file:// URL\n"
        "#   KB502 ls/notes.txt:2: column 7: an e-mail address\n"
        "# allow:\n"
    ) in text


def test_init_never_overwrites_without_force(bench: Path, cli) -> None:
    small_bench(bench)
    (bench / "kit.yaml").write_text("kit: mine\n")
    result = cli("init", "lme", "ls")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: kit.yaml: already exists, and init never overwrites a config. "
        "Pass --force to replace it, or --config to write another file.\n"
    )
    assert (bench / "kit.yaml").read_text() == "kit: mine\n"
    assert cli("init", "lme", "ls", "--force", "--date", "2026-11-09").exit_code == 0
    assert (bench / "kit.yaml").read_text() == EXPECTED


def test_init_refuses_bad_input(bench: Path, cli) -> None:
    small_bench(bench)
    result = cli("init", "lme", "nothere")
    assert (result.exit_code, result.stderr) == (
        2,
        "kitbuild: SOURCE 2: no such folder. Give the bench folders whose records the kit will publish.\n",
    )
    result = cli("init", "lme", "lme/a0")
    assert result.exit_code == 2 and "SOURCE 2 lies inside SOURCE 1" in result.stderr
    result = cli("init", "lme", "--config", "lme/kit.yaml")
    assert result.exit_code == 2 and "would lie inside SOURCE 1" in result.stderr
    result = cli("init", "lme", "--date", "2026-13-01")
    assert result.exit_code == 2 and "--date" in result.stderr
    assert not (bench / "kit.yaml").exists() and not (bench / "lme/kit.yaml").exists()


def test_init_output_is_deterministic(bench: Path) -> None:
    small_bench(bench)
    first = init(["lme", "ls"], "a.yaml", date="2026-11-09").text
    for path in sorted(bench.rglob("*")):
        os.utime(path, (1, 1))
    second = init(["lme", "ls"], "b.yaml", date="2026-11-09").text
    assert first == second


def test_output_parses_back_to_what_it_proposes(bench: Path) -> None:
    small_bench(bench)
    (bench / "lme/odd.json").write_text(json.dumps({"host": "true", "node": "10.0.0.7", "p": "/data/x y/1.json"}) + "\n")
    init(["lme", "ls"], date="2026-11-09")
    data = yaml.safe_load((bench / "kit.yaml").read_text())
    assert data["rules"][1]["with"]["names"] == {"10.0.0.7": "", "gpu-b17.cluster.example.net": "", "gpu-b17": ""}
    assert data["out"] == "./kit" and data["date"] == "2026-11-09"


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("gpu-b17", ["gpu-b17"]),
        ("gpu-b17.cluster.example.net:11434", ["gpu-b17.cluster.example.net"]),
        ("http://gpu-b17:8080/api/embed", ["gpu-b17"]),
        ("10.1.2.3", ["10.1.2.3"]),
        ("localhost:11434", []),
        ("true", []),
        ("127.0.0.1", []),
        ("4090", []),
        ("not a host", []),
    ],
)
def test_host_names(value: str, names: list[str]) -> None:
    assert host_names(value) == names


def test_unresolved_paths_group_under_their_common_folder_without_covering_a_source() -> None:
    groups = _group_unresolved(
        ["/x/bench/smoke/a.json", "/x/bench/smoke/b/c.json", "/x/bench/other.json", "/opt/tool/bin/run"],
        ["/x/bench/ls"],
    )
    assert groups == {
        "/x/bench/smoke": ["/x/bench/smoke/a.json", "/x/bench/smoke/b/c.json"],
        "/x/bench/other.json": ["/x/bench/other.json"],
        "/opt/tool/bin": ["/opt/tool/bin/run"],
    }


def test_a_printed_path_resolves_by_the_files_it_names(tmp_path: Path) -> None:
    root = small_bench(tmp_path / "b")
    (root / "ls/cfg.json").write_text(json.dumps({"m": "/opt/models/run/lock.json", "n": "/elsewhere/ls/reading.json"}) + "\n")
    (root / "ls/reading.json").write_text("{}\n")
    scan = scan_bench([root / "lme", root / "ls"])
    by_prefix = {m.prefix: m.kit_path for m in scan.maps}
    # A two-part tail that exists in ls ('run/lock.json') resolves; a bare file name resolves only
    # under a folder of the source's own name.
    assert by_prefix == {"/opt/models": "ls", "/elsewhere/ls": "ls", "/scratch/u7/runs/lme": "lme"}


def test_a_path_is_found_where_the_rules_read_one(tmp_path: Path) -> None:
    # After a JSON escape (a logged line's '\n', a typographic quote), with each '/' escaped as PHP
    # writes JSON, percent-encoded in a URL and in a file URL: init proposes the map entry the build
    # will need.
    root = small_bench(tmp_path / "b")
    logged = {"log": "loading\n/data/u7/old/a0/run/rows.ndjson", "note": "“/data/u8/runs/lme/w7”", "url": "/x?p=%2Fsrv%2Fu10%2Flme%2Fw7%2Ffuse.json&n=1", "at": "FILE:///srv/u11/lme/w7/fuse.json"}
    (root / "ls/log.json").write_text(json.dumps(logged) + "\n" + json.dumps({"php": "/srv/u9/lme/w7/fuse.json"}).replace("/", "\\/") + "\n")
    prefixes = {m.prefix for m in scan_bench([root / "lme", root / "ls"]).maps}
    assert {"/data/u7/old", "/data/u8/runs/lme", "/srv/u9/lme", "/srv/u10/lme", "/srv/u11/lme"} <= prefixes


def test_a_system_path_that_names_nothing_here_is_not_proposed(tmp_path: Path) -> None:
    # A traceback's paths name no person or machine, and the gate passes them: no entry to fill
    # in. Another path outside the bench still is one, and a system path that names a file here
    # stands for its folder like any other.
    root = small_bench(tmp_path / "b")
    printed = ["/usr/lib/python3.11/site.py", "/lib64/ld-linux.so.2", "/etc/ssl/certs/ca.pem", "C:\\Windows\\System32\\kernel32.dll",
               "c:/programdata/tool/x.cfg", "/opt/tool/bin/run", "/usr/local/u7/lme/a0/run/rows.ndjson", "/usr/home/ada/notes/x.txt"]
    (root / "ls/tb.json").write_text(json.dumps({"trace": printed}) + "\n")
    prefixes = {m.prefix: m.kit_path for m in scan_bench([root / "lme", root / "ls"]).maps}
    assert "/opt/tool/bin" in prefixes and "/usr/home/ada/notes" in prefixes and prefixes["/usr/local/u7/lme"] == "lme"
    assert not any(p.startswith(("/usr/lib", "/lib64", "/etc", "C:", "c:")) for p in prefixes), prefixes


def test_a_windows_path_is_proposed_as_the_key_a_map_takes(tmp_path: Path) -> None:
    # As written, as JSON writes it (each '\' doubled) and with '/': each resolves by the files it
    # names like a POSIX path, and the proposal is the Windows key the path rule matches all three by.
    root = small_bench(tmp_path / "b")
    printed = {"as_written": "C:\\Users\\ada\\lme\\a0\\run\\rows.ndjson", "slashes": "D:/old/u7/x/y.json"}
    (root / "ls/win.json").write_text(json.dumps(printed) + "\n" + "copied from C:\\Users\\ada\\lme\\a0 and E:\\one\n")
    maps = {m.prefix: m for m in scan_bench([root / "lme", root / "ls"]).maps}
    assert maps["C:\\Users\\ada\\lme"].kit_path == "lme"
    assert sum(maps["C:\\Users\\ada\\lme"].printed.values()) == 2
    assert maps["D:\\old\\u7\\x"].kit_path is None
    assert not any(p.startswith("E:") for p in maps)  # one folder deep names no bench folder
