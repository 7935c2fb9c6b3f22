"""Which files a source contributes, and the links and names it refuses (issue 2, points 9 and 10)."""

from __future__ import annotations

import os

import pytest

from kitbuild.config import load_config
from kitbuild.errors import ConfigError
from kitbuild.sources import glob_regex, list_files


def kit_paths(bench, write_kit, **source):
    write_kit(bench, sources=[{"path": "src", "as": "run", **source}])
    return [f.kit_path for f in list_files(load_config("kit.yaml"))]


TREE = {
    "src": {
        "z.json": "{}",
        "full-s1": {"run": {"rows.ndjson": "", "run.json": "{}"}, "logs": {"a.log": "", "deep": {"b.log": ""}}},
        "s2-skip.json": "{}",
        "B.txt": "",
    }
}


def test_every_file_sorted_by_kit_path(bench, make_files, write_kit):
    make_files(bench, TREE)
    assert kit_paths(bench, write_kit) == [
        "run/B.txt", "run/full-s1/logs/a.log", "run/full-s1/logs/deep/b.log", "run/full-s1/run/rows.ndjson",
        "run/full-s1/run/run.json", "run/s2-skip.json", "run/z.json",
    ]


def test_include_and_exclude(bench, make_files, write_kit):
    make_files(bench, TREE)
    paths = kit_paths(bench, write_kit, include=["full-s1/**", "s2-skip.json"], exclude=["full-s1/logs/**"])
    assert paths == ["run/full-s1/run/rows.ndjson", "run/full-s1/run/run.json", "run/s2-skip.json"]


def test_sources_in_config_order_do_not_change_the_sorted_listing(bench, make_files, write_kit):
    make_files(bench, {"one": {"a.txt": ""}, "two": {"a.txt": ""}})
    write_kit(bench, sources=[{"path": "two", "as": "b-run"}, {"path": "one", "as": "a-run"}])
    files = list_files(load_config("kit.yaml"))
    assert [(f.kit_path, f.source) for f in files] == [("a-run/a.txt", 1), ("b-run/a.txt", 0)]


@pytest.mark.parametrize(
    "pattern, yes, no",
    [
        ("*.json", ["a.json"], ["d/a.json", "a.jsonl"]),
        ("**/*.json", ["a.json", "d/e/a.json"], ["a.ndjson"]),
        ("full-s1/**", ["full-s1/a", "full-s1/x/y"], ["full-s10/a", "other/full-s1/a"]),
        ("a?.txt", ["ab.txt"], ["a/.txt", "abc.txt"]),
        ("s2-skip.json", ["s2-skip.json"], ["s2-skipXjson", "d/s2-skip.json"]),
    ],
)
def test_glob_regex(pattern, yes, no):
    regex = glob_regex(pattern)
    assert all(regex.match(p) for p in yes)
    assert not any(regex.match(p) for p in no)


def test_include_glob_that_matches_nothing(bench, make_files, write_kit):
    make_files(bench, TREE)
    with pytest.raises(ConfigError) as err:
        kit_paths(bench, write_kit, include=["full-s1/**", "full-s2/**"])
    assert str(err.value) == (
        "kit.yaml:10:5: sources[0].include[1]: the glob 'full-s2/**' matches no file in that source. Fix the glob or remove it."
    )


def test_symlink_inside_the_source_is_followed(bench, make_files, write_kit):
    make_files(bench, {"src": {"real": {"a.txt": "x"}}})
    os.symlink("real", bench / "src/alias")
    os.symlink("real/a.txt", bench / "src/b.txt")
    assert kit_paths(bench, write_kit) == ["run/alias/a.txt", "run/b.txt", "run/real/a.txt"]


@pytest.mark.parametrize("target", ["../outside.txt", "../outside"])
def test_symlink_pointing_outside_the_source_is_refused_by_name(bench, make_files, write_kit, target):
    make_files(bench, {"outside.txt": "secret", "outside": {"f": ""}, "src": {"d": {"ok.txt": ""}}})
    os.symlink(os.path.join("..", target), bench / "src/d/link")
    with pytest.raises(ConfigError) as err:
        kit_paths(bench, write_kit)
    assert str(err.value) == (
        "sources[0] (run): d/link: is a symlink that points outside its source; kitbuild refuses it. "
        "Copy the file in, or exclude the link."
    )


def test_broken_symlink_is_refused_by_name(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    os.symlink("nowhere", bench / "src/gone")
    with pytest.raises(ConfigError, match=r"^sources\[0\] \(run\): gone: is a broken symlink; remove it or exclude it\.$"):
        kit_paths(bench, write_kit)


def test_file_name_with_a_line_break_is_refused_on_one_line(bench, make_files, write_kit):
    # The name is shown with its line break escaped: the message stays one line.
    make_files(bench, {"src": {"a\nb.txt": ""}})
    with pytest.raises(ConfigError) as raised:
        kit_paths(bench, write_kit)
    assert raised.value.message == (
        "sources[0] (run): a\\nb.txt: a file name with a backslash or a line break cannot be listed in SHA256SUMS; rename it or exclude it."
    )


def test_a_name_with_a_terminal_escape_is_shown_escaped(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    os.mkfifo(bench / "src" / "p\x1b[2Jipe")
    with pytest.raises(ConfigError) as raised:
        kit_paths(bench, write_kit)
    assert raised.value.message == "sources[0] (run): p\\x1b[2Jipe: is not a regular file (a device, FIFO or socket); exclude it."


def test_fifo_is_refused(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    os.mkfifo(bench / "src/pipe")
    with pytest.raises(ConfigError, match=r"^sources\[0\] \(run\): pipe: is not a regular file"):
        kit_paths(bench, write_kit)


def test_an_excluded_link_or_odd_file_is_not_refused(bench, make_files, write_kit):
    # The refusals say 'or exclude it': excluding must then work.
    make_files(bench, {"outside.txt": "secret", "src": {"ok.txt": "", "logs": {}}})
    os.symlink("../outside.txt", bench / "src/link")
    os.mkfifo(bench / "src/logs/pipe")
    os.symlink("nowhere", bench / "src/logs/gone")
    assert kit_paths(bench, write_kit, exclude=["link", "logs/**"]) == ["run/ok.txt"]


def test_a_symlinked_file_is_read_from_the_file_it_leads_to_and_built(bench, make_files, write_kit, cli):
    make_files(bench, {"src": {"real.json": '{"a": 1}\n'}})
    os.symlink("real.json", bench / "src" / "alias.json")
    write_kit(bench, out="kit", sources=[{"path": "src", "as": "run"}])
    assert [f.src for f in list_files(load_config(bench / "kit.yaml"))] == [str(bench / "src" / "real.json")] * 2
    assert cli("build").exit_code == 0
    assert (bench / "kit" / "run" / "alias.json").read_bytes() == b'{"a": 1}\n'


@pytest.mark.parametrize("change", ["a symlink out of the bench", "a FIFO", "a folder", "nothing"])
def test_a_source_file_changed_after_the_listing_is_refused_and_nothing_is_written(bench, make_files, write_kit, cli, monkeypatch, change):
    # A file replaced while the build runs: a link put in its place is not followed out of the
    # bench (its target would be published), a FIFO is not waited on, and a gone file is said.
    from kitbuild.commands import build as build_command

    make_files(bench, {"src": {"a.json": '{"a": 1}\n', "b.json": '{"b": 2}\n'}, "outside.txt": "not the bench's\n"})
    write_kit(bench, out="kit", sources=[{"path": "src", "as": "run"}])
    listed = build_command.list_files

    def then_changed(config):
        files = listed(config)
        target = bench / "src" / "b.json"
        target.unlink()
        {"a symlink out of the bench": lambda: target.symlink_to(bench / "outside.txt"), "a FIFO": lambda: os.mkfifo(target), "a folder": target.mkdir, "nothing": lambda: None}[change]()
        return files

    monkeypatch.setattr(build_command, "list_files", then_changed)
    result = cli("build", "--jobs", "1")
    assert result.exit_code == 2
    assert result.stderr.startswith("kitbuild: run/b.json: its source file changed while the build ran")
    assert str(bench) not in result.stderr
    assert not (bench / "kit").exists() and not [p for p in bench.iterdir() if p.name.startswith(".kit")]
