"""Loading kit.yaml: what a config means, and every way it can be wrong (issue 2, 'The kit config')."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from kitbuild.config import load_config
from kitbuild.errors import ConfigError

HEAD = "kit: k\ntitle: T\ndate: 2026-11-09\n"


def config_text(body):
    return HEAD + textwrap.dedent(body)


def test_minimal_config_and_defaults(bench, make_files, write_kit):
    make_files(bench, {"src": {"a.txt": "x\n"}})
    write_kit(bench, text=config_text("sources:\n  - {path: src, as: run}\n"))
    config = load_config("kit.yaml")
    assert (config.kit, config.title, config.date, config.licence, config.summary) == ("k", "T", "2026-11-09", None, None)
    assert config.out == bench / "kit"
    assert config.rules == () and config.allow == () and dict(config.external_digests) == {}
    assert config.readme_template is None and config.not_here is None


def test_date_stays_the_string_typed(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    write_kit(bench, text=config_text("sources:\n  - {path: src, as: run}\n"))
    assert load_config("kit.yaml").date == "2026-11-09"


def test_relative_paths_are_relative_to_kit_yaml_not_the_working_folder(tmp_path, make_files, write_kit, monkeypatch):
    make_files(tmp_path, {"proj": {"bench": {"ls": {"a.txt": "x"}}}, "elsewhere": {}})
    write_kit(tmp_path / "proj", text=config_text("out: ../published\nsources:\n  - {path: ./bench/ls, as: run}\n"))
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = load_config("../proj/kit.yaml")
    [source] = config.sources
    assert source.path == tmp_path / "proj/bench/ls"
    assert config.out == tmp_path / "published"


def test_a_relative_source_still_maps_its_absolute_form(bench, make_files, write_kit):
    make_files(bench, {"bench": {"ls-2026-11-07": {"a.txt": "x"}}})
    write_kit(bench, text=config_text("sources:\n  - {path: bench/ls-2026-11-07, as: learned-sparse}\n"))
    config = load_config("kit.yaml")
    assert config.source_map() == {str(bench / "bench/ls-2026-11-07"): "learned-sparse"}
    private = config.private_strings()
    assert str(bench / "bench/ls-2026-11-07") in private
    assert "bench/ls-2026-11-07" in private  # the relative spelling, as kit.yaml gives it


def test_a_source_reached_through_a_symlinked_folder_maps_both_spellings(bench, make_files, write_kit):
    make_files(bench, {"disk": {"runs": {"ls": {"a.txt": "x"}}}})
    os.symlink(bench / "disk", bench / "link")
    write_kit(bench, text=config_text("sources:\n  - {path: link/runs/ls, as: run}\n"))
    config = load_config("kit.yaml")
    real = os.path.realpath(bench / "disk/runs/ls")
    assert config.source_map() == {str(bench / "link/runs/ls"): "run", real: "run"}
    assert {str(bench / "link/runs/ls"), real} <= set(config.private_strings())


def test_private_strings_name_map_keys_and_box_names_with_safe_descriptions(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    write_kit(bench, text=config_text("""\
        sources:
          - {path: src, as: run}
        rules:
          - use: record-path-to-kit-path
            with: {map: {/scratch/u7/lme: lme}}
          - use: box-name-to-role
            with: {names: {gpu-b17: desktop}}
        """))
    private = load_config("kit.yaml").private_strings()
    assert private["/scratch/u7/lme"] == "a private path that 'lme' stands for (rules[0])"
    assert private["gpu-b17"] == "a name that 'desktop' stands for (rules[1])"
    for key, what in private.items():
        assert key not in what


@pytest.mark.parametrize("key", ["/home/ada/lme", "/Users/ada/lme", "/scratch/ada/lme", "/usr/home/ada/lme", "C:\\Users\\ada\\lme"])
def test_the_owner_of_a_home_folder_a_map_key_names_is_private(bench, make_files, write_kit, key):
    make_files(bench, {"src": {}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "record-path-to-kit-path", "with": {"map": {key: "lme"}}}])
    from kitbuild.private import private_strings

    assert private_strings(load_config("kit.yaml")).get("ada", "").startswith("the owner's name in ")


def test_public_holds_nothing_private(bench, make_files, write_kit):
    make_files(bench, {"src": {}})
    write_kit(bench, text=config_text("sources:\n  - {path: src, as: run, about: the run}\n"))
    config = load_config("kit.yaml")
    assert str(bench) not in repr(config.public())
    assert config.public()["sources"] == [{"as": "run", "about": "the run"}]


# -- bad input: each case with its exact message -----------------------------------------------

BAD = {
    "yaml syntax": (
        "sources:\n  - {path: src, as: run\n",
        "kit.yaml:6:1: the YAML does not parse: expected ',' or '}', but got '<stream end>'. Fix the syntax at that place.",
    ),
    "schema, with key path and line": (
        "sources:\n  - {path: src, as: run}\nrules:\n  - use: record-path-to-kit-path\n  - use: box-name-to-role\n"
        "    with:\n      names: [gpu-b17]\n",
        "kit.yaml:10:14: rules[1].with.names: must be of type object (rule 'box-name-to-role'; see docs/rules.md, 'Built-in rules')",
    ),
    "schema, unknown key": (
        "sources:\n  - {path: src, as: run}\noutput: x\n",
        # At the key's own line, with the key it is nearest to.
        "kit.yaml:6:1: output: unknown key; did you mean 'out'? The keys allowed here are: allow, authors, date, external_digests, figures, kit, "
        "licence, out, rai, readme, rules, sources, summary, title, url, version. See docs/config.md, 'Every key'.",
    ),
    "schema, nested key": (
        "sources:\n  - {path: src, as: run, about: 3}\n",
        "kit.yaml:5:33: sources[0].about: must be of type string. See docs/config.md, 'Every key'.",
    ),
    "reserved as": (
        "sources:\n  - {path: src, as: SHA256SUMS}\n",
        "kit.yaml:5:21: sources[0].as: is a name kitbuild reserves for the kit's own files. See docs/config.md, 'Every key'.",
    ),
    "unknown rule": (
        "sources:\n  - {path: src, as: run}\nrules:\n  - use: box-name-to-roles\n",
        "kit.yaml:7:10: rules[0].use: no such rule: 'box-name-to-roles'; did you mean 'box-name-to-role'? The built-in rules are: "
        "record-path-to-kit-path, box-name-to-role, digest-withheld; a rule file is named by its path.",
    ),
    "missing rule file": (
        "sources:\n  - {path: src, as: run}\nrules:\n  - use: ./mine.yaml\n",
        "kit.yaml:7:10: rules[0].use: no rule file at the path given here (relative to kit.yaml). Give a built-in id "
        "(record-path-to-kit-path, box-name-to-role, digest-withheld) or the path of a rule file.",
    ),
    "missing source": (
        "sources:\n  - {path: src, as: run}\n  - {path: gone, as: other}\n",
        "kit.yaml:6:12: sources[1].path: no such folder. Relative paths are relative to the folder that holds kit.yaml.",
    ),
    "same as twice": (
        "sources:\n  - {path: src, as: run}\n  - {path: src2, as: run}\n",
        "kit.yaml:6:22: sources[1].as: sources[0] is published as the same kit folder; give each source its own 'as'",
    ),
    "nested sources": (
        "sources:\n  - {path: src, as: run}\n  - {path: src/a, as: sub}\n",
        "kit.yaml:6:12: sources[1].path: lies inside sources[0]; a file would be published twice. Use include/exclude "
        "on one source instead",
    ),
    "not a calendar date": (
        "sources:\n  - {path: src, as: run}\n",
        "kit.yaml:3:7: date: is not a real calendar date (YYYY-MM-DD)",
    ),
    "out inside a source": (
        "out: src/kit\nsources:\n  - {path: src, as: run}\n",
        "kit.yaml:4:6: out: the kit would be written inside sources[0] (run); kitbuild never writes inside a source. "
        "Choose a folder outside it.",
    ),
    "source inside out": (
        "out: .\nsources:\n  - {path: src, as: run}\n",
        "kit.yaml:4:6: out: sources[0] (run) lies inside it, and a build replaces that folder. Choose a folder outside it.",
    ),
    "missing template": (
        "sources:\n  - {path: src, as: run}\nreadme: {template: ./page.j2}\n",
        "kit.yaml:6:20: readme.template: no such template file (relative to kit.yaml)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_message(bench, make_files, write_kit, case):
    body, message = BAD[case]
    make_files(bench, {"src": {"a": {"f.txt": "x\n"}}, "src2": {"g.txt": "y\n"}})
    head = HEAD.replace("2026-11-09", "2026-02-30") if case == "not a calendar date" else HEAD
    write_kit(bench, text=head + body)
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    assert str(err.value) == message
    assert err.value.exit_code == 2
    assert str(bench) not in str(err.value)


def test_no_kit_yaml(bench):
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    assert str(err.value) == "kit.yaml: no such file. Give the path of a kit config, or run 'kitbuild init' to write one."


def test_empty_kit_yaml(bench, write_kit):
    write_kit(bench, text="")
    with pytest.raises(ConfigError, match=r"^kit.yaml: the file is empty\. "):
        load_config("kit.yaml")


def test_required_keys(bench, write_kit):
    write_kit(bench, text="kit: k\ntitle: T\nsources: []\n")
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    assert str(err.value) == "kit.yaml:1:1: (top level): 'date' is required here. See docs/config.md, 'Every key'."


def test_libyaml_and_the_pure_parser_read_configs_alike():
    """Configs are parsed by libyaml where PyYAML has it: the data and every node's place must be
    the pure-Python parser's, for the shipped rules and a config with every kind of value."""
    import yaml

    from kitbuild import yamlfile

    if yamlfile._FAST is yamlfile._PURE:
        pytest.skip("PyYAML was built without libyaml here: only the pure-Python parser runs")
    texts = [p.read_text() for p in sorted((Path(__file__).parents[1] / "rules").glob("*.yaml"))]
    texts.append(config_text("""\
        out: ./kit  # a comment
        sources:
          - {path: src, as: run}
          - path: "quoted: value"
            as: 'single'
        rules:
          - use: box-name-to-role
            with:
              names: {gpu-b17: desktop, "10.0.0.1": "ten"}
              n: [1, 2.5, true, null, 0x1F, 2026-11-09T10:00:00]
        summary: |
          two
          lines
        """))

    def nodes(node):
        yield (type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column)
        children = node.value if isinstance(node, yaml.SequenceNode) else [n for kv in node.value for n in kv] if isinstance(node, yaml.MappingNode) else []
        for child in children:
            yield from nodes(child)

    for text in texts:
        fast, pure = yamlfile._parse(text, yamlfile._FAST), yamlfile._parse(text, yamlfile._PURE)
        assert fast[0] == pure[0]
        assert list(nodes(fast[1])) == list(nodes(pure[1]))
    assert yamlfile._parse(HEAD, yamlfile._FAST)[0]["date"] == "2026-11-09"  # still no timestamps


def test_every_docs_section_a_message_points_at_exists():
    # Messages once sent readers to README.md sections that had moved to docs/: each pointer
    # ("see docs/config.md, 'Every key'") must name a page and a heading that are there.
    import re
    from pathlib import Path

    import kitbuild

    package = Path(kitbuild.__file__).parent
    pointers = {
        match.groups()
        for path in package.rglob("*.py")
        for match in re.finditer(r"[Ss]ee (docs/[\w.]+|README\.md), '([^']+)'", path.read_text(encoding="utf-8"))
    }
    assert ("docs/config.md", "Every key") in pointers
    for page, section in sorted(pointers):
        headings = re.findall(r"^#+ (.+)$", (package.parent / page).read_text(encoding="utf-8"), flags=re.M)
        assert section in headings, f"{page} has no section {section!r}"
