"""The pages' prose from kitbuild 0.3.0 on: figures cited in it, its Markdown as HTML, and each
rule's firings told in this kit's words.

- **Citations.** ``summary``, ``not_here`` and each source's ``about`` may cite a figure as the
  figures table's page texts do, ``{{ bm25_every5 }} of {{ bm25_every5.of }}``: one syntax for every
  text kit.yaml writes, rendered in the same bounded sandbox (:func:`kitbuild.figures.render_text`)
  with the figures as its only names. A page prints the figure's recounted text, and verify's
  KB706 finds a page whose cited number is not what the kit's files recount.
- **Markdown.** index.html renders the prose fields' Markdown with markdown-it-py in its safe
  mode: raw HTML is printed as text, links are checked by markdown-it's own rules (no
  ``javascript:``), and images are off, since an image would be a resource the page fetches.
- **Rules in this kit's words.** What each rule did here, from its provenance.json record only: its
  firings by kit folder, the public words it wrote, and how many private names became each (never
  the names themselves).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from markdown_it import MarkdownIt
from markupsafe import Markup

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).disable("image")


def markdown_html(text: str) -> Markup:
    """``text`` (Markdown) as HTML blocks, safe to put in a page as it is."""
    return Markup(_MARKDOWN.render(text).rstrip("\n"))


def markdown_inline(text: str) -> Markup:
    """``text`` (one paragraph of Markdown) as inline HTML: no ``<p>`` around it."""
    return Markup(_MARKDOWN.renderInline(text))


def cite(text: str | None, figures: Mapping[str, Any], label: str, env: Any) -> str | None:
    """``text`` with the figures it cites filled in; raises FigureSpecError naming ``label``."""
    if text is None:
        return None
    from kitbuild.figures.render import render_text

    return render_text(text, figures, label, env)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _by_folder(firings: Mapping[str, int]) -> list[tuple[str, int, int]]:
    """(kit folder, files, firings) for each top folder the rule fired in, in path order."""
    folders: dict[str, list[int]] = {}
    for path, n in sorted(firings.items()):
        top = path.split("/", 1)[0]
        counts = folders.setdefault(top, [0, 0])
        counts[0] += 1
        counts[1] += n
    return [(top, files, n) for top, (files, n) in folders.items()]


def rule_here(rule: Mapping[str, Any]) -> str:
    """What ``rule`` (a provenance.json record) did in this kit, in Markdown."""
    firings = rule.get("firings", {})
    total = int(rule.get("total", 0))
    primitive = rule.get("primitive")
    writes = [str(w) for w in rule.get("writes", [])]
    mapped = rule.get("mapped", {})
    if not total:
        return "Here it fired nowhere: no record printed what it rewrites."
    where = _and([f"`{top}/` ({_plural(files, 'file')}, {_plural(n, 'time')})" for top, files, n in _by_folder(firings)])
    out = f"Here it fired {_plural(total, 'time')} in {_plural(len(firings), 'file')}: in {where}."
    if primitive == "path_prefix" and writes:
        became = [f"`{w}/`" + (f" ({_plural(mapped[w], 'private folder')})" if w in mapped else "") for w in writes]
        out += f" The private folders it knew became the kit folders {_and(became)}; the rest of each path is as the record printed it."
    elif primitive == "literal_names" and writes:
        became = [(f"{_plural(mapped[w], 'machine name')} became" if w in mapped else "machine names became") + f" `{w}`" for w in writes]
        sentence = _and(became)
        out += f" {sentence[:1].upper()}{sentence[1:]}."
        fields = rule.get("fields")
        if fields:
            out += f" It looked only in the field{'' if len(fields) == 1 else 's'} {_and([f'`{f}`' for f in fields])}."
    elif primitive == "digest" and rule.get("placeholder"):
        out += f" Each of those digests now reads `{rule['placeholder']}`."
    elif writes:
        out += f" The words it wrote: {_and([f'`{w}`' for w in writes])}."
    return out
