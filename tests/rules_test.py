"""The rule registry, built-in rule files and users' own rule files (issue 2, 'Rules are declarative')."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
import yaml

from kitbuild.config import load_config
from kitbuild.errors import ConfigError, RuleError
from kitbuild.resources import rules_dir
from kitbuild.rules import BUILTIN_RULES, builtin_rule, load_rule_file, resolve_rule, sample_problems

PERSON_RULE = """\
id: person-name-to-role
sentence: Each person's name a record printed now reads as the role that person played.
docs:
  what: Replaces each name in `names` by a role, whole names only.
  why: A reader needs the role, not the person.
  example: |
    - use: ./person-name-to-role.yaml
      with: {names: {Ada Quill: annotator}}
matcher:
  primitive: literal_names
params:
  type: object
  additionalProperties: false
  required: [names]
  properties:
    names: {type: object, minProperties: 1, additionalProperties: {type: string, minLength: 1}}
samples:
  firing:
    - with: {names: {Ada Quill: annotator}}
      input: "labelled by Ada Quill."
      output: "labelled by annotator."
      firings: 1
  not_firing:
    - with: {names: {Ada Quill: annotator}}
      input: "labelled by Ada Quillson"
"""

TICKET_RULE = """\
id: ticket-to-ref
sentence: Internal ticket numbers now read as a neutral reference.
docs:
  what: Replaces JIRA-style ticket ids.
  why: Ticket ids name an internal tracker.
  example: "- use: ./ticket-to-ref.yaml"
matcher:
  primitive: regex
  options: {pattern: "\\\\bOPS-[0-9]+\\\\b", replace: "ticket"}
params: {type: object, additionalProperties: false}
samples:
  firing:
    - input: "see OPS-1234 and OPS-7"
      output: "see ticket and ticket"
      firings: 2
  not_firing:
    - input: "DEVOPS-12 is not one"
"""


# -- the registry walk -------------------------------------------------------------------------


def test_registry_lists_exactly_the_rule_files():
    assert sorted(p.stem for p in rules_dir().glob("*.yaml")) == sorted(BUILTIN_RULES)
    assert len(set(BUILTIN_RULES)) == len(BUILTIN_RULES)


@pytest.mark.parametrize("rule_id", BUILTIN_RULES)
def test_every_builtin_rule_loads_documents_itself_and_its_samples_hold(rule_id):
    rule = builtin_rule(rule_id)
    assert rule.id == rule_id == (rules_dir() / f"{rule_id}.yaml").stem
    assert rule.origin == f"rules/{rule_id}.yaml"
    assert rule.sentence.strip() and rule.sentence.endswith(".")
    for section in ("what", "why", "example"):
        assert rule.docs[section].strip(), section
    assert rule.samples["firing"] and rule.samples["not_firing"]
    assert sample_problems(rule) == []
    # The documented example is a valid use of the rule.
    example = yaml.safe_load(rule.docs["example"])
    assert example[0]["use"] == rule_id
    assert rule.check_params(example[0].get("with", {})) is None


@pytest.mark.parametrize("rule_id", BUILTIN_RULES)
def test_every_builtin_rule_passes_the_checks_a_kits_own_rule_file_gets(rule_id):
    # A build skips the metaschema check of a built-in rule's params (kitbuild.rules.load_rule_file);
    # this is where it is made.
    path = rules_dir() / f"{rule_id}.yaml"
    assert load_rule_file(path, path.name) == dataclasses.replace(builtin_rule(rule_id), origin=path.name)


@pytest.mark.parametrize("rule_id", BUILTIN_RULES)
def test_samples_are_checked_so_a_wrong_output_is_caught(rule_id):
    # The samples only prove something if sample_problems notices when they are wrong.
    rule = builtin_rule(rule_id)
    firing = [dict(s, output=s["output"] + "!") for s in rule.samples["firing"]]
    broken = type(rule)(**{**rule.__dict__, "samples": {**rule.samples, "firing": firing}})
    assert len(sample_problems(broken)) == len(firing)


def test_unknown_rule_lists_the_known_ones(tmp_path):
    with pytest.raises(RuleError) as err:
        resolve_rule("box-name-to-rol", tmp_path)
    assert str(err.value) == (
        "no such rule: 'box-name-to-rol'. The built-in rules are: record-path-to-kit-path, box-name-to-role, "
        "digest-withheld; a rule file is named by its path."
    )


# -- users' rule files -------------------------------------------------------------------------


def test_user_literal_names_rule_from_kit_yaml(bench, make_files, write_kit):
    make_files(bench, {"person-name-to-role.yaml": PERSON_RULE, "src": {"notes.txt": "Ada Quill labelled it.\n"}})
    write_kit(
        bench,
        sources=[{"path": "src", "as": "run"}],
        rules=[{"use": "./person-name-to-role.yaml", "with": {"names": {"Ada Quill": "annotator"}}}],
    )
    from kitbuild import build

    report = build("kit.yaml")
    assert (bench / "kit/run/notes.txt").read_bytes() == b"annotator labelled it.\n"
    [record] = report.rules
    assert (record["name"], record["builtin"], record["firings"], record["total"]) == (
        "person-name-to-role", False, {"run/notes.txt": 1}, 1)
    assert b"Ada Quill" not in b"".join(p.read_bytes() for p in (bench / "kit").rglob("*") if p.is_file())


def test_user_regex_rule_from_kit_yaml(bench, make_files, write_kit):
    make_files(bench, {"rules/ticket-to-ref.yaml": TICKET_RULE, "src": {"log.txt": "OPS-1 then OPS-22\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "rules/ticket-to-ref.yaml"}])
    from kitbuild import build

    report = build("kit.yaml")
    assert (bench / "kit/run/log.txt").read_bytes() == b"ticket then ticket\n"
    assert report.rules[0]["firings"] == {"run/log.txt": 2}


def test_user_rule_whose_samples_misbehave_is_an_error_naming_it(bench, make_files, write_kit, cli):
    broken = PERSON_RULE.replace('output: "labelled by annotator."', 'output: "labelled by someone."')
    make_files(bench, {"person-name-to-role.yaml": broken, "src": {"a.txt": "x\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "./person-name-to-role.yaml", "with": {"names": {"A": "b"}}}])
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: kit.yaml:9:8: rules[0].use: person-name-to-role.yaml: rule 'person-name-to-role': its own samples "
        "do not hold:\n  samples.firing[0]: gives 'labelled by annotator.', the sample says 'labelled by someone.'\n"
    )
    assert not (bench / "kit").exists()


def test_rule_file_failing_its_schema_names_the_key(tmp_path):
    path = tmp_path / "person-name-to-role.yaml"
    path.write_text(PERSON_RULE.replace("  primitive: literal_names", "  primitive: literal_name"))
    with pytest.raises(RuleError) as err:
        load_rule_file(path, "person-name-to-role.yaml")
    assert str(err.value) == (
        "person-name-to-role.yaml:10:14: matcher.primitive: must be one of 'path_prefix', 'literal_names', 'digest', "
        "'regex'. See docs/rules.md, 'Rule files'."
    )


def test_a_kits_own_rule_file_with_a_params_schema_jsonschema_rejects_is_an_error(tmp_path):
    path = tmp_path / "person-name-to-role.yaml"
    path.write_text(PERSON_RULE.replace("  type: object\n  additionalProperties: false", "  type: objekt\n  additionalProperties: false"))
    with pytest.raises(RuleError) as err:
        load_rule_file(path, "person-name-to-role.yaml")
    assert str(err.value).startswith("person-name-to-role.yaml:11:1: rule 'person-name-to-role': params is not a valid JSON Schema: ")


def test_rule_id_must_equal_file_name(tmp_path):
    path = tmp_path / "names.yaml"
    path.write_text(PERSON_RULE)
    with pytest.raises(RuleError, match=r"names.yaml:1:5: the rule's id 'person-name-to-role' must equal its file name"):
        load_rule_file(path, "names.yaml")


def test_with_block_checked_against_the_rules_own_schema(bench, make_files, write_kit):
    make_files(bench, {"src": {"a.txt": "x\n"}})
    write_kit(bench, text=textwrap.dedent("""\
        kit: k
        title: T
        date: 2026-11-09
        sources:
          - {path: src, as: run}
        rules:
          - use: record-path-to-kit-path
          - use: box-name-to-role
            with:
              names: [gpu-b17]
        """))
    with pytest.raises(ConfigError) as err:
        load_config("kit.yaml")
    assert str(err.value) == (
        "kit.yaml:10:14: rules[1].with.names: must be of type object (rule 'box-name-to-role'; see docs/rules.md, 'Built-in rules')"
    )
