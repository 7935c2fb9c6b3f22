"""README.md and index.html, rendered with jinja2 from the kit's own data.

The context is built from provenance.json and index.json alone, so a reader's ``kitbuild verify``
can render the pages again from the kit and compare bytes. Every template, built-in or one that
travels with a kit, is rendered in jinja2's sandbox with ``StrictUndefined``: a template that
reaches for Python internals, or for a name the context does not have, fails instead of running
or printing nothing.
"""

from __future__ import annotations

from typing import Any, Mapping

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from kitbuild.errors import KitbuildError
from kitbuild.resources import templates_dir

# Long kits (say, 100,000 row files) would make a README nobody reads; past this many files a
# folder's table stops and points to index.json, which lists them all.
FILES_LISTED_PER_FOLDER = 200
PAGE_TEMPLATES = {"README.md": "README.md.j2", "index.html": "index.html.j2"}
PUBLIC_CONFIG_KEYS = ("kit", "title", "date", "licence", "summary", "sources", "allow", "external_digests", "not_here")


class TemplateError(KitbuildError):
    """A page template could not be rendered (exit 1 in a build, a finding in verify)."""

    exit_code = 1


def _environment(custom: Mapping[str, str]) -> SandboxedEnvironment:
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
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["short"] = lambda digest: str(digest)[:12]
    return env


def page_context(provenance: Mapping[str, Any], index: Mapping[str, Any]) -> dict[str, Any]:
    """What templates see; derived from the kit's provenance.json and index.json only."""
    files = list(index.get("files", []))
    folders = []
    for source in provenance.get("sources", []):
        prefix = source["as"] + "/"
        inside = [f for f in files if f["path"].startswith(prefix)]
        folders.append(
            {
                **source,
                "files": inside[:FILES_LISTED_PER_FOLDER],
                "more": max(0, len(inside) - FILES_LISTED_PER_FOLDER),
                "count": len(inside),
            }
        )
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
    }


def render_pages(context: Mapping[str, Any], custom: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Each page name -> its bytes. ``custom`` maps a template name (e.g. README.md.j2) to its text."""
    env = _environment(custom or {})
    pages = {}
    for page, template_name in PAGE_TEMPLATES.items():
        try:
            text = env.get_template(template_name).render(context)
        except jinja2.TemplateError as exc:
            origin = "the kit's own" if template_name in (custom or {}) else "the built-in"
            raise TemplateError(f"{page}: {origin} template {template_name} cannot be rendered: {type(exc).__name__}: {exc}") from None
        pages[page] = text.encode("utf-8")
    return pages
