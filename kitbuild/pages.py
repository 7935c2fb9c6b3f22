"""README.md and index.html, rendered with jinja2 from the kit's own data.

The context is built from provenance.json and index.json alone, so a reader's ``kitbuild verify``
can render the pages again from the kit and compare bytes. Every template, built-in or one that
travels with a kit, is rendered in jinja2's sandbox with ``StrictUndefined``: a template that
reaches for Python internals, or for a name the context does not have, fails instead of running
or printing nothing.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any, Mapping

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from kitbuild.errors import KitbuildError
from kitbuild.jsonfile import dump_json
from kitbuild.resources import templates_dir

# Long kits (say, 100,000 row files) would make a README nobody reads; past this many files a
# folder's table stops and points to index.json, which lists them all.
FILES_LISTED_PER_FOLDER = 200
PAGE_TEMPLATES = {"README.md": "README.md.j2", "index.html": "index.html.j2"}
PUBLIC_CONFIG_KEYS = ("kit", "title", "date", "licence", "summary", "sources", "allow", "external_digests", "not_here")


class TemplateError(KitbuildError):
    """A page template could not be rendered (exit 1 in a build, a finding in verify)."""

    exit_code = 1


def _thousands(n: Any) -> str:
    return f"{n:,}"


def _short(digest: Any) -> str:
    return str(digest)[:12]


def _cell(text: Any) -> str:
    # A Markdown table cell: a '|' in a page text or a path would end the cell.
    return str(text).replace("|", "\\|")


FILTERS = {"thousands": _thousands, "short": _short, "cell": _cell}


def _environment(custom: Mapping[str, str]) -> SandboxedEnvironment:
    # A kit's own template first, then the built-in ones.
    loader = jinja2.ChoiceLoader([jinja2.DictLoader(dict(custom)), jinja2.FileSystemLoader(str(templates_dir()))])
    env = SandboxedEnvironment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        # The templates end in .j2: autoescape must look at the name before it, or index.html is
        # rendered unescaped and a title or file name with "<" or "&" breaks the page.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


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
        tables.append({"name": name, "about": spec.get("about"), "by": by, "columns": columns, "rows": rows})
    return tables


def _path_of(entry: Any) -> str:
    """An index entry's path: a dict when read from a kit, an :class:`~kitbuild.entries.Entry` in a build."""
    # A dict first: the Mapping test goes through the ABC machinery, a microsecond an entry.
    return str(entry["path"] if type(entry) is dict or isinstance(entry, Mapping) else entry.path)


def page_context(provenance: Mapping[str, Any], index: Mapping[str, Any]) -> dict[str, Any]:
    """What templates see; derived from the kit's provenance.json and index.json only."""
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

        try:
            figures = views(stored)
            figures_table = render_figures_table(table, figures)
        except FigureSpecError as exc:
            # A page text naming a part no figure has: the kit's own provenance.json cannot be rendered.
            raise TemplateError(f"figures_table: {exc.message}") from None
    return {
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
        "kit_digest": _kit_digest(provenance, index),
    }


# Pages print the kit's digest from this version on; an earlier kit's pages are rendered as that
# version wrote them, so that it keeps verifying.
DIGEST_IN_PAGES_SINCE = (0, 2, 0)


def _kit_digest(provenance: Mapping[str, Any], index: Mapping[str, Any]) -> str | None:
    """The kit's one digest (kitbuild.kitdocs.kit_digest), from index.json as kitbuild writes it."""
    version = str(provenance.get("tool", {}).get("version", "0"))
    try:
        built_by = tuple(int(part) for part in version.split(".")[:3])
    except ValueError:
        built_by = ()
    if built_by < DIGEST_IN_PAGES_SINCE:
        return None
    return "sha256:" + hashlib.sha256(dump_json(index)).hexdigest()


def render_pages(context: Mapping[str, Any], custom: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Each page name -> its bytes. ``custom`` maps a template name (e.g. README.md.j2) to its text."""
    custom = custom or {}
    env = _environment(custom)
    pages = {}
    for page, template_name in PAGE_TEMPLATES.items():
        try:
            text = env.get_template(template_name).render(context)
        except jinja2.TemplateError as exc:
            origin = "the kit's own" if template_name in custom else "the built-in"
            raise TemplateError(f"{page}: {origin} template {template_name} cannot be rendered: {type(exc).__name__}: {exc}") from None
        pages[page] = text.encode("utf-8")
    return pages
