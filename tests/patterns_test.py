"""A rule's own regular expression: refused before anything is read if it cannot work, and
bounded in time when it backtracks without end (kitbuild.matchers, the regex library)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kitbuild import matchers
from kitbuild.errors import RuleError
from kitbuild.matchers import Matcher
from config_inputs_test import RULE  # a rule file of the regex primitive, whose with: may set both
from kittest import make_files, write_kit



def bench(root: Path, with_: dict[str, str], record: str = '{"host": "box-alice"}\n') -> None:
    make_files(root, {"src": {"run.json": record}, "myrule.yaml": RULE})
    write_kit(root, out="kit", sources=[{"path": "src", "as": "run"}], rules=[{"use": "box-name-to-role", "with": {"names": {"gpu7": "x"}}}, {"use": "./myrule.yaml", "with": with_}])


@pytest.mark.parametrize(
    "with_, says",
    [
        ({"pattern": "box-("}, "its pattern cannot be used: missing )"),
        ({"pattern": "*a"}, "its pattern cannot be used: nothing to repeat"),
        ({"replace": "\\2"}, "its replace cannot be used"),
        ({"replace": "\\g<nope>"}, "its replace cannot be used"),
        ({"replace": "\\q"}, "its replace cannot be used: bad escape"),
    ],
)
def test_a_pattern_or_template_that_cannot_work_is_refused_before_anything_is_read(tmp_path, cli, with_, says):
    bench(tmp_path, with_)
    result = cli("build", tmp_path / "kit.yaml")
    assert result.exit_code == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    key = "pattern" if "pattern" in with_ else "replace"
    assert result.stderr.startswith(f"kitbuild: {tmp_path / 'kit.yaml'}:") and f": rules[1].with.{key}: " in result.stderr
    assert not (tmp_path / "kit").exists()


def test_a_template_naming_the_patterns_groups_works():
    matcher = Matcher("regex", pattern="box-(?P<name>[a-z]+)-([0-9])", replace="\\g<name> \\2 \\n")
    assert matcher.find(b"a box-ada-7 b") == [(2, 11, b"ada 7 \n")]


BACKTRACKING = "(a|aa)+c"


def test_a_pattern_that_backtracks_without_end_stops_the_build_in_bounded_time(tmp_path, cli, monkeypatch):
    monkeypatch.setattr(matchers, "PATTERN_SECONDS", 0.5)
    bench(tmp_path, {"pattern": BACKTRACKING, "replace": "x"}, record='{"host": "box-alice"}\n' * 3 + '"' + "a" * 40 + '"\n')
    began = time.monotonic()
    result = cli("build", tmp_path / "kit.yaml", "--jobs", "1")
    assert time.monotonic() - began < 30
    assert result.exit_code == 2, result.stderr
    assert "rules[1]: its pattern searched run/run.json from line 1 for more than 0.5 s without finishing" in result.stderr
    assert not (tmp_path / "kit").exists() and not list(tmp_path.glob(".kit*"))


def test_a_rules_own_sample_that_backtracks_is_a_rule_error_in_bounded_time(tmp_path, monkeypatch):
    from kitbuild.rules import load_rule_file

    monkeypatch.setattr(matchers, "PATTERN_SECONDS", 0.5)
    path = tmp_path / "myrule.yaml"
    path.write_text(RULE.replace("box-[a-z]+", BACKTRACKING).replace('"nothing"', '"' + "a" * 40 + '"'))
    began = time.monotonic()
    with pytest.raises(RuleError) as caught:
        load_rule_file(path, "myrule.yaml")
    assert time.monotonic() - began < 30
    assert "samples.not_firing[0]: the rule fails on this sample" in str(caught.value)
