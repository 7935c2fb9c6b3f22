"""README.md and index.html, rendered with jinja2 from the kit's own data.

The context is built from provenance.json and index.json alone, so a reader's ``kitbuild verify``
can render the pages again from the kit and compare bytes. Every template, built-in or one that
travels with a kit, is rendered in jinja2's sandbox with ``StrictUndefined``: a template that
reaches for Python internals, or for a name the context does not have, fails instead of running
or printing nothing.

The sandbox is bounded as well (:mod:`kitbuild.pages.sandbox`, which holds the limits): past
any of them a template stops with a :class:`TemplateError` that names the limit.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any, Mapping

import jinja2

from kitbuild.errors import EXIT_FINDINGS, KitbuildError
from kitbuild.figures.derivation import label_of
from kitbuild.jsonfile import dump_json
from kitbuild.pages.sandbox import FILTERS as FILTERS
from kitbuild.pages.sandbox import _pages_environment, _Refused
from kitbuild.pages.sandbox import bounded_environment as bounded_environment

# Long kits (say, 100,000 row files) would make a README nobody reads; past this many files a
# folder's table stops and points to index.json, which lists them all.
FILES_LISTED_PER_FOLDER = 200
PAGE_TEMPLATES = {"README.md": "README.md.j2", "index.html": "index.html.j2"}
PUBLIC_CONFIG_KEYS = ("kit", "title", "date", "licence", "summary", "sources", "allow", "external_digests", "not_here")


class TemplateError(KitbuildError):
    """A page template could not be rendered: a finding (KB602) in verify.

    ``reason`` is what went wrong, without the page and template names the message starts with;
    ``template`` names the kit's own template when it is the one that failed (a build reports
    that as its config's error), and is None for a built-in one (exit 1: the kit's data).
    """

    exit_code = EXIT_FINDINGS

    def __init__(self, message: str, reason: str | None = None, template: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.template = template
        # The line of the kit's own template it failed at (None: not one of its lines).
        self.line = line


def _figure_tables(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each group_by figure as a table the built-in pages print: a row per group, a column per figure."""
    tables = []
    for name, record in figures.items():
        spec = record.get("spec", {})
        if spec.get("recount") != "group_by":
            continue
        columns = list(spec.get("figures", []))
        # A McNemar column holds a net gain, which has no "of": "+3", not "+3 of 64".
        gains = {c for c in columns if figures.get(c, {}).get("spec", {}).get("recount") == "mcnemar_exact"}
        rows = []
        for label, group in record.get("parts", {}).items():
            cells = []
            for column in columns:
                cell = group.get("parts", {}).get(column, {})
                of = cell.get("of")
                cells.append(cell.get("text", "") + (f" of {of['text']}" if of is not None and column not in gains else ""))
            rows.append({"label": label, "count": group["text"], "cells": cells})
        by = str(spec.get("by", "")).rsplit("/", 1)[-1]
        labels = [label_of(c, figures.get(c, {}).get("spec", {})) for c in columns]
        tables.append({"name": name, "about": spec.get("about"), "by": by, "columns": columns, "labels": labels, "rows": rows})
    return tables


def _path_of(entry: Any) -> str:
    """An index entry's path: a dict when read from a kit, an :class:`~kitbuild.entries.Entry` in a build."""
    # A dict first: the Mapping test goes through the ABC machinery, a microsecond an entry.
    return str(entry["path"] if type(entry) is dict or isinstance(entry, Mapping) else entry.path)


def page_context(provenance: Mapping[str, Any], index: Mapping[str, Any], digest: str | None = None) -> dict[str, Any]:
    """What templates see; derived from the kit's provenance.json and index.json only.
    ``digest``: the kit digest, when the caller has index.json's bytes as kitbuild writes them
    (else they are written again to hash them: 16 MB for a kit of 100,000 files)."""
    files = list(index.get("files", []))
    # A kit's 100,000 entries are all dicts (read from index.json) or all Entries (in a build):
    # their paths then come from one C-level pass, not a Python call each (15 ms of verify C's
    # path, where the main process is the last to finish).
    kinds = set(map(type, files))
    if kinds == {dict}:
        paths = list(map(operator.itemgetter("path"), files))
    elif len(kinds) == 1 and hasattr(files[0], "path") and not isinstance(files[0], Mapping):
        paths = list(map(operator.attrgetter("path"), files))
    else:
        paths = [_path_of(f) for f in files]
    folders = []
    for source in provenance.get("sources", []):
        prefix = source["as"] + "/"
        inside = [f for f, path in zip(files, paths) if path.startswith(prefix)]
        folders.append(
            {
                **source,
                "files": inside[:FILES_LISTED_PER_FOLDER],
                "more": max(0, len(inside) - FILES_LISTED_PER_FOLDER),
                "count": len(inside),
            }
        )
    stored, table = provenance.get("figures", {}), provenance.get("figures_table", [])
    figures: dict[str, Any] = {}
    figures_table: list[dict[str, Any]] = []
    if stored or table:  # (the figure modules, and jinja2 with them, only then)
        from kitbuild.figures import render_figures_table, views
        from kitbuild.figures.errors import FigureSpecError
        from kitbuild.figures.evaluation import stored_spec_problem

        # The tables and derivations below read each spec's keys: a spec a build would refuse
        # (a tampered kit's) is said to be one, never met as a value of the wrong type.
        for name, record in stored.items():
            # (provenance.json's schema requires a spec; the pages read one that is absent as {}.)
            problem = stored_spec_problem(name, record["spec"]) if "spec" in record else None
            if problem:
                raise TemplateError(f"provenance.json: figure {name!r} has a spec a build would refuse, so its pages cannot be rendered: {problem}")
        try:
            figures = views(stored)
            figures_table = render_figures_table(table, figures)
        except FigureSpecError as exc:
            # A page text naming a part no figure has: the kit's own provenance.json cannot be rendered.
            raise TemplateError(f"figures_table: {exc.message}") from None
    context = {
        "title": provenance["title"],
        "date": provenance["date"],
        "licence": provenance.get("licence"),
        "summary": provenance.get("summary"),
        "not_here": provenance.get("not_here"),
        "folders": folders,
        "rules": provenance.get("rules", []),
        "external_digests": provenance.get("external_digests", {}),
        "records": provenance.get("records", 0),
        "files": files,
        # Issue 2: a user's template gets the config, the index and the provenance. The config
        # is its public side as provenance.json records it, so verify can render it again.
        "config": {key: provenance.get(key) for key in PUBLIC_CONFIG_KEYS},
        "provenance": provenance,
        "index": index,
        # Issue 4: {{ figures.bm25_every5 }} prints a figure's stored text; figures_table the rows
        # of 'Where each figure on the page comes from', their page texts rendered.
        "figures": figures,
        "figures_table": figures_table,
        "figure_tables": _figure_tables(provenance.get("figures", {})),
        "kit_digest": _kit_digest(provenance, index, digest),
        "layout": "0.2",
    }
    if built_by(provenance) >= PROSE_SINCE:
        context.update(_prose(provenance, figures, folders))
    return context


def _prose(provenance: Mapping[str, Any], figures: Mapping[str, Any], folders: list[dict[str, Any]]) -> dict[str, Any]:
    """What the pages of a kit built by kitbuild 0.3.0 or later add: the prose with its figures
    cited and its Markdown as HTML, each figure's derivation, and each rule's firings in this
    kit's words (:mod:`kitbuild.pages.prose`)."""
    from kitbuild.figures.errors import FigureSpecError
    from kitbuild.pages import prose

    texts = {"summary": provenance.get("summary"), "not_here": provenance.get("not_here")}
    texts.update({f"sources[{i}].about": folder.get("about") for i, folder in enumerate(folders)})
    cited: dict[str, str | None] = {}
    env = None
    for label, text in texts.items():
        # A text with no '{' is its own rendering: the figure modules are not needed for it.
        if text is None or "{" not in text:
            cited[label] = text
            continue
        from kitbuild.figures.render import text_environment
        from kitbuild.figures.table import check_text_names

        env = env or text_environment()  # one clock for all the prose
        try:
            check_text_names(text, figures, label, env)
            cited[label] = prose.cite(text, figures, label, env)
        except FigureSpecError as exc:
            raise TemplateError(exc.message) from None
    out_folders = []
    for i, folder in enumerate(folders):
        about = cited[f"sources[{i}].about"]
        out_folders.append({**folder, "about": about, "about_html": None if about is None else prose.markdown_inline(about)})
    derivations = []
    if provenance.get("figures"):
        from kitbuild.figures.derivation import derivations as derive

        derivations = [{**d, "html": prose.markdown_inline(d["text"])} for d in derive(provenance["figures"])]
    rules = []
    for rule in provenance.get("rules", []):
        here = prose.rule_here(rule)
        rules.append({**rule, "here": here, "here_html": prose.markdown_inline(here)})
    summary, not_here = cited["summary"], cited["not_here"]
    return {
        "layout": "0.3",
        "citation": _citation(provenance),
        "summary": summary,
        "summary_html": None if summary is None else prose.markdown_html(summary),
        "not_here": not_here,
        "not_here_html": None if not_here is None else prose.markdown_html(not_here),
        "folders": out_folders,
        "rules": rules,
        "derivations": derivations,
    }


def _citation(provenance: Mapping[str, Any]) -> dict[str, Any] | None:
    """The README's "How to cite" (kitbuild.citation): None for a kit that names no authors."""
    from kitbuild.citation import authors, bibtex, display_name

    people = authors(provenance)
    if not people:
        return None
    return {"names": ", ".join(display_name(a) for a in people), "version": provenance.get("version"), "url": provenance.get("url"), "bibtex": bibtex(provenance)}


# Pages print the kit's digest from this version on; an earlier kit's pages are rendered as that
# version wrote them, so that it keeps verifying.
DIGEST_IN_PAGES_SINCE = (0, 2, 0)
# From this version on the pages cite figures in their prose, print how each figure was counted,
# label a table's columns, tell each rule's firings in the kit's words and give index.html all
# the README says (templates/README.md.j2, index.html.j2); a kit built earlier is rendered with
# the templates that version shipped (templates/0.2/), so its pages keep verifying byte for byte.
PROSE_SINCE = (0, 3, 0)
FROZEN_TEMPLATES = "0.2"


def built_by(provenance: Mapping[str, Any]) -> tuple[int, ...]:
    """The kitbuild version that built a kit, as provenance.json records it: (0, 3, 0)."""
    tool = provenance.get("tool")
    version = str(tool.get("version", "0")) if isinstance(tool, Mapping) else "0"
    try:
        return tuple(int(part) for part in version.split(".")[:3])
    except ValueError:
        return ()


def _kit_digest(provenance: Mapping[str, Any], index: Mapping[str, Any], digest: str | None) -> str | None:
    """The kit's one digest (kitbuild.kitdocs.kit_digest), from index.json as kitbuild writes it."""
    if built_by(provenance) < DIGEST_IN_PAGES_SINCE:
        return None
    return digest or "sha256:" + hashlib.sha256(dump_json(index)).hexdigest()


def render_pages(context: Mapping[str, Any], custom: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Each page name -> its bytes. ``custom`` maps a template name (e.g. README.md.j2) to its text.

    Both pages are rendered in one bounded sandbox (the limits at the top of
    :mod:`kitbuild.pages.sandbox`); a template past a limit, or one jinja2 cannot render, raises
    :class:`TemplateError`.
    """
    custom = custom or {}
    env = _pages_environment(custom)
    pages = {}
    frozen = context.get("layout") != "0.3"
    for page, template_name in PAGE_TEMPLATES.items():
        own = template_name in custom
        name = template_name if own or not frozen else f"{FROZEN_TEMPLATES}/{template_name}"
        try:
            pages[page] = env.render_page(name, context).encode("utf-8")
        except Exception as exc:
            fault = _fault(exc, own, env, name)
            if fault is None:
                raise
            origin = "the kit's own" if own else "the built-in"
            # A line of the kit's own template is the writer's to fix, and named; a line of a
            # built-in one is kitbuild's, and only its template is named.
            line = fault.line if own and fault.template == template_name else None
            at = f"line {line}: " if line is not None else ""
            inside = f" (in the built-in template {fault.template}, line {fault.line})" if own and line is None and fault.line and fault.template else ""
            reason = fault.text + inside
            message = f"{page}: {origin} template {template_name} cannot be rendered: {at}{reason}"
            raise TemplateError(message, reason, template_name if own else None, line) from None
    return pages


def _fault(exc: Exception, own: bool, env: Any, name: str) -> Any:
    """What a page's failure says (a :class:`kitbuild.pages.faults.Fault`); None where the
    built-in templates met a provenance.json or index.json they cannot be rendered from, which
    verify reports as such (KB602)."""
    from kitbuild.pages.faults import Fault, describe, innermost
    from kitbuild.resources import templates_dir

    # A limit names the line the template was at when it was reached, where its frames say.
    where, line = innermost(exc, name, str(templates_dir()))
    if isinstance(exc, _Refused):
        return Fault(where, line, str(exc))
    if isinstance(exc, RecursionError):
        return Fault(where, line, "it nests too deep (a macro or {% include %} that calls itself without end?); make it nest less")
    if isinstance(exc, MemoryError):
        return Fault(where, line, "it ran out of memory; make it build less")
    if isinstance(exc, jinja2.TemplateError) or own:  # whatever a kit's own template did is its own
        return describe(exc, env, name, root=str(templates_dir()))
    return None
