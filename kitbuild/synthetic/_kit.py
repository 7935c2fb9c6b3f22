"""The kit.yaml a researcher would write beside this bench to publish it."""

from __future__ import annotations

from importlib.resources import files

# The summary cites its figures ({{ name }}, as the figures table's page texts do): the README
# prints the numbers the kit's files count, and verify checks them there too.
SUMMARY = (
    "A synthetic bench, drawn from fixed seeds, shaped like the LongMemEval-S runs behind the "
    "Reciprocal rank fusion page: the October bench (BM25, nomic-embed-text, their fusion and the "
    "BGE-small fusion) and the learned-sparse run of 2026-11-07 with its six fusions, recounts and "
    "registered comparisons. Its questions, sessions and lists are invented; its counts match the page. "
    "The page counts **every@5**: the answerable questions ({{ bm25_every5.of }} of {{ bm25_any5.of }}) "
    "whose every answer-holding session is in a list's top 5. BM25 alone finds {{ bm25_every5 }}, the "
    "registered fusion {{ a2_every5 }} ({{ fusion_vs_bm25.diff }}, p {{ fusion_vs_bm25 }}), and the "
    "learned-sparse run's three fusions {{ f1_every5 }}, {{ f2_every5 }} and {{ f3_every5 }}."
)

NOT_HERE = (
    "The registrations and the bench's internal results records are not here: they name machines, "
    "people and private paths, and the page states each rule it uses in words. No question, answer or "
    "chat session text is here either; LongMemEval is public, and every lock pins the file it was read "
    "from by sha256. The embedding vectors, the logs, the smoke runs and the arms that were cut or never "
    "scored are left out because no figure on the page reads them."
)


def figures_block() -> str:
    """The demo's figures and its README's figures table, as kit.yaml text (figures.yaml, one copy)."""
    return files("kitbuild.synthetic").joinpath("figures.yaml").read_text(encoding="utf-8")


def kit_yaml(harness_sha256: str) -> str:
    # figures.yaml ends with the 'readme:' mapping (its figures_table); not_here joins it there.
    head, readme = figures_block().split("\nreadme:\n", 1)
    return _settings(harness_sha256) + "\n" + head + f'\nreadme:\n  not_here: "{NOT_HERE}"\n' + readme


def _settings(harness_sha256: str) -> str:
    return f"""kit: rrf-data-kit
title: "Reciprocal rank fusion: the data kit"
date: 2026-11-09
licence: CC-BY-4.0
version: 1.0.0
authors:
  - name: "The kitbuild demo bench"
summary: "{SUMMARY}"
rai:
  data_limitations: "Synthetic records drawn from fixed seeds: they show how a kit carries a result, and support no claim about any retrieval method."
  data_biases: "None measured: the questions, sessions and rankings are invented, and only their counts are set to match the page."
  personal_sensitive_information: "None. The private paths and machine names the bench prints are rewritten by the named rules, and the leak gate checks every file."
  data_use_cases: "Trying kitbuild: building, verifying and publishing a kit, and reading its pages."
  data_social_impact: "None expected: no person, text or model output is in the records."
  has_synthetic_data: true
  derived_from: ["nothing outside kitbuild: every record is drawn from the fixed seeds of kitbuild.synthetic"]
  generated_by: "kitbuild demo, from fixed seeds (kitbuild.synthetic)"
out: ./kit
sources:
  - path: bench/lme-2026-10
    as: longmemeval-2026-10
    about: "the October bench, registered before its first score"
  - path: bench/ls-2026-11-07
    as: learned-sparse-2026-11-07
    about: "the second registered run, on 2026-11-07"
    include: ["full-s1/**", "s2-skip.json"]
    exclude: ["full-s1/logs/**"]
rules:
  - use: record-path-to-kit-path
    with:
      map: {{/scratch/u7/runs/lme-2026-10: longmemeval-2026-10}}
  - use: box-name-to-role
    with:
      names: {{gpu-b17.cluster.example.net: desktop, gpu-b17: desktop}}
      fields: [route]
  - use: digest-withheld
    with:
      placeholder: withheld-2026-09-29
external_digests:
  d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442: "longmemeval_s_cleaned.json, the public dataset"
  {harness_sha256}: "the bench harness, pinned by every lock"
"""
