"""Every config error names the line where the bad value is used, however the YAML spells it.

A value error on one key once named the line of another node: of the first of two keys given
twice (YAML keeps the second), of the anchor an alias names (any other key), of a key a merge
brought in and the mapping then set again. Each case below marks its bad line with ``# <-``.
"""

from __future__ import annotations

import re

import pytest

from kitbuild.config import load_config
from kitbuild.errors import ConfigError

HEAD = "kit: k\ntitle: T\ndate: 2026-11-09\n"
SOURCES = "sources:\n  - {path: src, as: run}\n"

# the bad text, its bad line marked, and the key path the message must name
CASES: dict[str, tuple[str, str]] = {
    "licence, given twice (the second is bad)": (HEAD + "licence: CC-BY-4.0\n" + SOURCES + "licence: 7  # <-\n", "licence"),
    "title, given twice": (HEAD.replace("title: T\n", "") + "title: T\n" + SOURCES + "title: [a]  # <-\n", "title"),
    "licence, an alias of a list": ("sources: &s\n  - {path: src, as: run}\n" + HEAD + "licence: *s  # <-\n", "licence"),
    "summary, an alias of a mapping": (HEAD + SOURCES + "readme: &r {not_here: x}\nsummary: *r  # <-\n", "summary"),
    "licence, its value on the next line": (HEAD + SOURCES + "licence:  # <-\n  - CC-BY-4.0\n", "licence"),
    "sources[1].as, set again after a merge": (
        HEAD + "sources:\n  - &one\n    path: src\n    as: run\n  - <<: *one\n    as: 7  # <-\n", "sources[1].as"),
    "sources[0].about, an alias of a list": (
        HEAD + "sources:\n  - path: src\n    as: run\n    include: &a ['**']\n    about: *a  # <-\n", "sources[0].about"),
    "a rule's parameter, given twice": (
        HEAD + SOURCES + "rules:\n  - use: digest-withheld\n    with:\n      placeholder: withheld-x\n      placeholder: 7  # <-\n",
        "rules[0].with.placeholder"),
    "a map key, given twice": (
        HEAD + SOURCES + "rules:\n  - use: record-path-to-kit-path\n    with:\n      map:\n        /scratch/u7/a: a\n"
        "        /scratch/u7/a: b  # <-\n", "rules[0].with.map[key #2]"),
}


def _marked_line(text: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.endswith("# <-"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_value_is_placed_where_it_is_used(bench, make_files, write_kit, case):
    text, path = CASES[case]
    make_files(bench, {"src": {"a.txt": "x\n"}})
    write_kit(bench, text=text)
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    message = str(err.value)
    place = re.match(r"kit\.yaml:(\d+):\d+: ([^:]+):", message)
    assert place, message
    assert (int(place.group(1)), place.group(2)) == (_marked_line(text), path), message
    assert "/scratch/u7/a" not in message  # a map key is private: shown by its position


def test_a_key_given_twice_says_where_the_first_is(bench, make_files, write_kit):
    make_files(bench, {"src": {"a.txt": "x\n"}})
    write_kit(bench, text=HEAD + "licence: CC-BY-4.0\n" + SOURCES + "licence: CC0-1.0\n")
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    assert str(err.value) == "kit.yaml:7:1: licence: is given twice in one mapping, here and at line 4; only one can hold. Keep one of the two."


def test_a_merge_and_an_alias_that_are_right_still_load(bench, make_files, write_kit):
    make_files(bench, {"src": {"a.txt": "x\n"}, "src2": {"b.txt": "y\n"}})
    write_kit(bench, text=HEAD + "licence: &l CC-BY-4.0\nsummary: *l\nsources:\n  - &one\n    path: src\n    as: run\n"
              "  - <<: *one\n    path: src2\n    as: other\n")
    config = load_config("kit.yaml")
    assert (config.licence, config.summary) == ("CC-BY-4.0", "CC-BY-4.0")
    assert [(s.given, s.as_) for s in config.sources] == [("src", "run"), ("src2", "other")]


def test_the_same_places_with_the_pure_parser(bench, make_files, write_kit, monkeypatch):
    """libyaml's node tree and the pure-Python parser's must place every case alike."""
    from kitbuild import yamlfile

    monkeypatch.setattr(yamlfile, "_FAST", yamlfile._PURE)
    for case in sorted(CASES):
        test_a_bad_value_is_placed_where_it_is_used(bench, make_files, write_kit, case)
