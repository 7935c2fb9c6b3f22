"""kitbuild rules, and docs/rules.md's rule reference generated from the same rule files."""

from __future__ import annotations

import pytest

from kitbuild import docs
from kitbuild.commands.rules import rules_markdown, rules_text, shown, type_words
from kitbuild.rules import BUILTIN_RULES, builtin_rule


def test_rules_lists_every_builtin_rule_with_its_parts(cli) -> None:
    result = cli("rules")
    assert result.exit_code == 0
    assert result.stdout == rules_text() + "\n"
    for rule_id in BUILTIN_RULES:
        rule = builtin_rule(rule_id)
        assert f"{rule_id} ({rule.primitive})\n" in result.stdout
        for key in rule.params.get("properties", {}):
            assert f"    {key} (" in result.stdout
        for sample in rule.samples["firing"] + rule.samples["not_firing"]:
            assert f"      {shown(sample['input'])}\n" in result.stdout


def test_rules_text_shows_parameters_and_samples_exactly() -> None:
    text = rules_text()
    assert (
        "  Parameters (with:):\n"
        "    names (mapping of string to string, required): Each machine name, with the role it becomes.\n"
        "    fields (list of strings, optional): Only inside these keys' values or TSV columns.\n"
    ) in text
    assert (
        '    fires once, in hosts.tsv, with {"names":{"gpu-b17":"desktop"},"fields":["route"]}:\n'
        '      "qid\\troute\\tnote\\r\\nq1\\tgpu-b17\\tgpu-b17\\r\\n"\n'
        '      → "qid\\troute\\tnote\\r\\nq1\\tdesktop\\tgpu-b17\\r\\n"\n'
    ) in text


def test_markdown_option_prints_the_docs_reference(cli) -> None:
    result = cli("rules", "--markdown")
    assert result.exit_code == 0
    assert result.stdout == rules_markdown()


def test_rule_reference_is_the_generated_one() -> None:
    page = (docs.CHECKOUT / "docs/rules.md").read_text(encoding="utf-8")
    assert docs.block_of(page, "rules") == rules_markdown(), "run 'python -m kitbuild.docs'"


def test_config_reference_is_the_generated_one() -> None:
    page = (docs.CHECKOUT / "docs/config.md").read_text(encoding="utf-8")
    assert docs.block_of(page, "config") == docs.config_markdown(), "run 'python -m kitbuild.docs'"


def test_docs_check_reports_a_stale_block(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/rules.md").write_text("# x\n<!-- rules:start -->\nold\n<!-- rules:end -->\ntail\n")
    (tmp_path / "docs/config.md").write_text("<!-- config:start -->\n<!-- config:end -->\n")
    assert docs.stale_blocks(tmp_path) == ["docs/rules.md (rules)", "docs/config.md (config)"]
    assert docs.main(["--check", str(tmp_path)]) == 1
    assert docs.main([str(tmp_path)]) == 0
    assert docs.main(["--check", str(tmp_path)]) == 0
    text = (tmp_path / "docs/rules.md").read_text()
    assert text.startswith("# x\n<!-- rules:start -->\n#### `record-path-to-kit-path`\n")
    assert text.endswith("\n<!-- rules:end -->\ntail\n")


def test_replace_block_needs_both_markers() -> None:
    with pytest.raises(ValueError, match="expected one <!-- rules:start --> line followed by one <!-- rules:end --> line"):
        docs.replace_block("no markers\n", "rules", "x")


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "object", "additionalProperties": {"type": "string"}}, "mapping of string to string"),
        ({"type": "array", "items": {"type": "string"}}, "list of strings"),
        ({"type": "string"}, "string"),
        ({}, "any value"),
    ],
)
def test_type_words(schema, words) -> None:
    assert type_words(schema) == words
