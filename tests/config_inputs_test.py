"""Hostile inputs to kit.yaml and rule files: each is refused with exit 2 at its place, never a
hang, an internal error or a private path in the message (docs/config.md, 'Every key')."""

from __future__ import annotations

import os
import re
import threading

import pytest

from kitbuild.config import load_config
from kitbuild.errors import ConfigError
from kitbuild.schema import first_schema_problem, load_schema
from kitbuild.yamlfile import MAX_BYTES, load_yaml

BASE = """\
kit: tiny
title: A tiny kit
date: 2026-11-09
sources:
  - path: src
    as: run
rules:
  - use: record-path-to-kit-path
    with:
      map: {/home/alice/bench/src: run}
  - use: box-name-to-role
    with:
      names: {box-alice: desktop}
"""


@pytest.fixture
def tiny(bench, make_files):
    make_files(bench, {"src": {"run.json": '{"host": "box-alice"}\n'}})
    return bench


def refused(text: str) -> str:
    with open("kit.yaml", "w", encoding="utf-8") as f:
        f.write(text)
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    return err.value.message


# -- 1. not a regular file, or far too large ------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_kit_yaml_is_refused_without_blocking(tiny):
    os.mkfifo("kit.yaml")
    caught: list[BaseException] = []

    def load() -> None:
        try:
            load_config("kit.yaml")
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            caught.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader, then fail
        with open("kit.yaml", "w"):
            pass
        pytest.fail("load_config blocked on a FIFO")
    assert isinstance(caught[0], ConfigError) and "not a regular file" in str(caught[0])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_as_kit_yaml_is_refused_unread(tiny):
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config("/dev/zero")


def test_a_kit_yaml_past_the_size_limit_is_refused(tiny):
    message = refused(BASE + "summary: " + "x" * MAX_BYTES + "\n")
    assert "larger than" in message


def test_a_folder_as_kit_yaml_is_still_named_a_folder(tiny):
    os.mkdir("k.yaml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_config("k.yaml")


# -- 2. a trailing line break or CR in a key a pattern checks ------------------------------

PATTERNED = {
    "kit": ("kit: tiny\n", 'kit: "tiny{}"\n'),
    "as": ("    as: run\n", '    as: "run{}"\n'),
    "date": ("date: 2026-11-09\n", 'date: "2026-11-09{}"\n'),
}
APPENDED = {
    "version": 'version: "1.0.0{}"\n',
    "url": 'url: "https://example.org/kit/{}"\n',
    "orcid": 'authors:\n  - {{name: X, orcid: "https://orcid.org/0000-0002-1825-0097{}"}}\n',
    "external_digests": 'external_digests:\n  "{}": the release file\n',
}


@pytest.mark.parametrize("end", ["\\n", "\\r", "\\r\\n"])
@pytest.mark.parametrize("key", [*PATTERNED, *APPENDED])
def test_a_line_break_at_the_end_of_a_patterned_value_is_refused(tiny, key, end):
    if key in PATTERNED:
        plain, broken = PATTERNED[key]
        text = BASE.replace(plain, broken.format(end))
    elif key == "external_digests":
        text = BASE + APPENDED[key].format("a" * 64 + end)
    else:
        text = BASE + APPENDED[key].format(end)
    message = refused(text)
    assert ("external_digests" if key == "external_digests" else key) in message


@pytest.mark.parametrize("end", ["\\n", "\\r"])
def test_the_withheld_placeholder_refuses_a_line_break(tiny, end):
    text = BASE + f'  - use: digest-withheld\n    with: {{placeholder: "withheld{end}"}}\n'
    assert "rules[2].with.placeholder" in refused(text)


def test_every_end_anchored_pattern_refuses_a_final_line_break_in_python_and_rust():
    """Python's '$' matches before a final line break, ECMA-262's does not: kitbuild checks with
    both, and each of its schemas says the same to either."""
    for name in ("config", "figures", "index", "provenance", "rule", "report"):
        schema = load_schema(name)
        for pattern in _patterns(schema):
            if pattern.endswith("$"):
                assert pattern.endswith("(?!\\n)$"), (name, pattern)
    from kitbuild.schema import conforms

    schema = {"type": "string", "pattern": "^[a-z]+$"}
    assert not conforms("run\n", schema)
    assert first_schema_problem("run\n", schema) is not None  # the describing check agrees


@pytest.mark.parametrize(
    "pattern, text, matches",
    [("^[a-z]+$", "run\n", False), ("^a\\$$", "a$", True), ("^[$]$", "$", True), ("^[]$]x$", "]x", True), ("^[^]$]x$", "ax\n", False), ("^/", "/a\n", True)],
)
def test_a_pattern_is_read_as_ecma_262_reads_it(pattern, text, matches):
    from kitbuild.schema import ecma_pattern

    assert bool(re.search(ecma_pattern(pattern), text)) is matches
    assert (first_schema_problem(text, {"type": "string", "pattern": pattern}) is None) is matches


def _patterns(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            else:
                yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


# -- 3. a missing rule file is not echoed ---------------------------------------------------


@pytest.mark.parametrize("use", ["/home/secretuser/rules/r.yaml", "../secretuser/r.yaml", "rules/secretuser.yml"])
def test_a_missing_rule_file_is_reported_without_its_path(tiny, use):
    message = refused(BASE.replace("use: box-name-to-role", f"use: {use}"))
    assert "secretuser" not in message
    assert "kit.yaml:11:" in message and "rules[1].use" in message and "no rule file" in message


def test_a_bad_rule_file_at_a_private_path_is_named_without_it(tiny, tmp_path):
    secret = tmp_path / "secretuser"
    secret.mkdir()
    (secret / "r.yaml").write_text("id: r\nsentence: [\n")
    message = refused(BASE.replace("use: box-name-to-role", f"use: {secret / 'r.yaml'}"))
    assert "secretuser" not in message and str(tmp_path) not in message
    assert "rules[1].use" in message and "r.yaml:3:" in message


def test_a_fifo_as_a_rule_file_is_refused_at_its_rules_entry(tiny):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo("myrule.yaml")
    message = refused(BASE + "  - use: ./myrule.yaml\n")
    assert "rules[2].use" in message and "not a regular file" in message


# -- 4. and 5. values JSON cannot hold ------------------------------------------------------


def test_an_integer_past_python_s_digit_limit_is_refused_at_its_line(tiny):
    message = refused(BASE.replace("title: A tiny kit", "title: " + "9" * 5000))
    assert message.startswith("kit.yaml:2:8: title: is an integer")


@pytest.mark.parametrize("value", ["9" * 5000, "0x" + "f" * 5000, "9" * 30, "-9223372036854775809", ".nan", "-.inf", "1.0e+999"])
def test_numbers_json_cannot_hold_are_refused_where_any_value_may_go(tmp_path, value):
    """Wherever a schema takes a number (a figure's filter, a rule's own params), it is one JSON
    can write: no .nan, no .inf, nothing past 64 bits."""
    path = tmp_path / "any.yaml"
    path.write_text(f"a:\n  b: [1, {value}]\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path, "any.yaml")
    assert err.value.message.startswith("any.yaml:2:10: [key #1][key #1][1]: is ")  # no key is public here


def test_numbers_json_can_hold_still_load(tmp_path):
    path = tmp_path / "any.yaml"
    path.write_text("a: [9223372036854775807, -9223372036854775808, 0x1f, 1.5e+3, 017, 1_000]\n")
    assert load_yaml(path, "any.yaml").data == {"a": [2**63 - 1, -(2**63), 31, 1500.0, 15, 1000]}


@pytest.mark.parametrize(
    "mapping, kind",
    [("{5: run}", "an integer"), ("{~: run}", "null"), ("{yes: run}", "a boolean"), ("{1.5: run}", "a number"), ("{[a]: run}", "not a plain string")],
)
def test_a_key_that_is_not_a_string_is_refused_at_its_key_path(tiny, mapping, kind):
    message = refused(BASE.replace("{/home/alice/bench/src: run}", mapping))
    assert message.startswith("kit.yaml:10:") and "rules[0].with.map[key #1]" in message and kind in message


def test_an_integer_key_in_external_digests_is_refused(tiny):
    message = refused(BASE + "external_digests:\n  1234: x\n")
    assert message.startswith("kit.yaml:15:3: external_digests[key #1]")


@pytest.mark.parametrize("value", ["!!set {a, b}", "!!binary aGVsbG8=", "!!omap [a: 1]", "!!pairs [a: 1]", "!!timestamp 2026-11-09", "!mine x"])
def test_a_tag_json_cannot_hold_is_refused(tiny, value):
    message = refused(BASE + f"summary: {value}\n")
    assert message.startswith("kit.yaml:14:10: summary: is tagged")


def test_plain_tags_and_merge_keys_still_load(tiny):
    text = BASE.replace("title: A tiny kit", "title: !!str 12") + "readme: &r {not_here: x}\nallow: []\n"
    with open("kit.yaml", "w") as f:
        f.write(text)
    assert load_config("kit.yaml").title == "12"


# -- 6. a kit folder named as a file the build writes ---------------------------------------


@pytest.mark.parametrize("name", ["croissant.json", "CITATION.cff", "README.md", "SHA256SUMS", "_templates", "Croissant.JSON", "readme.md"])
def test_a_kit_folder_named_as_a_written_file_is_refused(tiny, name):
    message = refused(BASE.replace("as: run", f"as: {name}"))
    assert message.startswith("kit.yaml:6:9: sources[0].as:")


@pytest.mark.parametrize("extra", [[], ["--dry-run"]])
@pytest.mark.parametrize("name", ["croissant.json", "CITATION.cff"])
def test_build_refuses_a_written_file_name_as_a_kit_folder(tiny, cli, name, extra):
    with open("kit.yaml", "w") as f:
        f.write(BASE.replace("as: run", f"as: {name}") + "authors:\n  - name: X\n")
    result = cli("build", *extra)
    assert result.exit_code == 2, result.stderr
    assert "sources[0].as" in result.stderr


# -- 7. a rule file's params schema that would reach outside it -----------------------------

RULE = """\
id: myrule
sentence: A regex rule.
docs: {what: x, why: y, example: z}
matcher:
  primitive: regex
  options: {pattern: "box-[a-z]+", replace: "desktop"}
params:
  type: object
  properties:
    pattern: {type: string}
    replace: {type: string}
samples:
  firing:
    - input: "box-alice"
      output: "desktop"
  not_firing:
    - input: "nothing"
"""


@pytest.mark.parametrize(
    "extra, key",
    [
        ('  $ref: "http://example.invalid/x.json"\n', 'params["$ref"]'),
        ('  $ref: "file:///etc/passwd"\n', 'params["$ref"]'),
        ('  $ref: "other.json#/x"\n', 'params["$ref"]'),
        ('  $dynamicRef: "https://example.invalid/x"\n', 'params["$dynamicRef"]'),
        ('  $id: "https://example.invalid/base"\n', 'params["$id"]'),
        ('  $schema: "https://example.invalid/meta"\n', 'params["$schema"]'),
        ('  $ref: "#/$defs/missing"\n', "params"),
        ('  $ref: "#/properties/nothing"\n', "params"),
    ],
)
def test_a_params_schema_that_refers_outside_the_file_is_refused(tiny, extra, key):
    with open("myrule.yaml", "w") as f:
        f.write(RULE.replace("params:\n", "params:\n" + extra))
    message = refused(BASE.replace("use: box-name-to-role\n    with:\n      names: {box-alice: desktop}\n", "use: ./myrule.yaml\n"))
    assert "rules[1].use" in message and "myrule.yaml:" in message and key in message


def test_a_params_schema_with_a_local_ref_still_works(tiny):
    rule = RULE.replace("    pattern: {type: string}\n", "    pattern: {$ref: '#/$defs/text'}\n")
    rule = rule.replace("params:\n", "params:\n  $defs: {text: {type: string}}\n")
    with open("myrule.yaml", "w") as f:
        f.write(rule)
    with open("kit.yaml", "w") as f:
        f.write(BASE.replace("use: box-name-to-role\n    with:\n      names: {box-alice: desktop}\n", "use: ./myrule.yaml\n    with: {pattern: 'box-[a-z]+'}\n"))
    config = load_config("kit.yaml")
    assert config.rules[1].rule.id == "myrule"
    with open("kit.yaml", "w") as f:
        f.write(BASE.replace("use: box-name-to-role\n    with:\n      names: {box-alice: desktop}\n", "use: ./myrule.yaml\n    with: {pattern: 5}\n"))
    assert re.search(r"rules\[1\]\.with\.pattern", refused(open("kit.yaml").read()))


def test_a_params_schema_whose_ref_loops_is_refused_not_a_recursion(tiny):
    rule = RULE.replace("params:\n", "params:\n  $defs: {a: {$ref: '#/$defs/a'}}\n").replace("    replace: {type: string}\n", "    replace: {$ref: '#/$defs/a'}\n")
    with open("myrule.yaml", "w") as f:
        f.write(rule)
    message = refused(BASE.replace("use: box-name-to-role\n    with:\n      names: {box-alice: desktop}\n", "use: ./myrule.yaml\n    with: {pattern: 5, replace: x}\n"))
    assert message.startswith("kit.yaml:12:")


@pytest.mark.parametrize("value, refused_", [("2.0", True), ("2", False), ("2.5", True)])
def test_a_float_where_an_integer_is_wanted_is_refused(value, refused_):
    schema = {"type": "object", "properties": {"k": {"type": "integer", "minimum": 1}, "w": {"type": "number"}}}
    import yaml

    problem = first_schema_problem(yaml.safe_load(f"{{k: {value}, w: 1.0}}"), schema)
    assert (problem is not None and problem.path == ["k"] and "integer" in problem.message) is refused_


def test_a_figure_s_k_of_2_0_is_refused_at_its_line(tiny):
    with open("src/rows.ndjson", "w") as f:
        f.write('{"qid": "q1", "search": ["a", "b"], "gold": ["a"]}\n')
    text = BASE + "figures:\n  n:\n    recount: every_at_k\n    rows: run/rows.ndjson\n    ranked: /search\n    gold: /gold\n    k: 2.0\n"
    message = refused(text)
    assert message.startswith("kit.yaml:20:8: figures.n.k: 2.0 is not a whole number as written")


# -- an out that goes through a symlink loop ---------------------------------------------------


def test_an_out_through_a_symlink_loop_is_refused_naming_the_key(tiny, cli):
    os.symlink("loop", tiny / "loop")
    for args, where in ((["build", "--out", "loop/kit"], "kitbuild: --out: "), (["build"], "kitbuild: kit.yaml:")):
        text = BASE + ("out: loop/kit\n" if args == ["build"] else "")
        (tiny / "kit.yaml").write_text(text, encoding="utf-8")
        result = cli(*args)
        assert result.exit_code == 2, result.stderr
        assert result.stderr.startswith(where) and "goes through a symlink loop" in result.stderr


# -- readme.template: a regular file of a page's size -----------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_template_that_is_a_fifo_is_named_so_not_missing(tiny):
    os.mkfifo("page.j2")
    assert refused(BASE + "readme:\n  template: page.j2\n").endswith("readme.template: is not a regular file (a folder, a pipe or a device)")


def test_a_template_past_a_mib_is_refused_before_it_is_read(tiny):
    with open("page.j2", "wb") as f:
        f.truncate((1 << 20) + 1)
    assert refused(BASE + "readme:\n  template: page.j2\n").endswith("readme.template: is larger than 1 MiB; give the page's template, not data")
