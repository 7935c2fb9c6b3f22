"""Figures on a page: what ``{{ bm25_every5 }}`` and ``{{ bm25_every5.of }}`` print.

A page is rendered from provenance.json alone (so verify can render it again from the kit), so
a :class:`FigureView` is built from a figure's stored record: its text, its ``of`` and its parts,
never from the rows. The same texts come out of :meth:`FigureValue.text`, so a page rendered
right after evaluation and one re-rendered from provenance.json agree byte for byte.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from kitbuild.figures.errors import FigureSpecError
from kitbuild.figures.value import FigureValue


class FigureView:
    """A figure as a template sees it.

    ``{{ f }}`` prints the text; ``{{ f.of }}`` the denominator; ``{{ f.a_only }}`` or
    ``{{ f["multi-session"] }}`` a part; ``{% for g in f.rows %}{{ g.label }}...`` walks the parts
    in order (a group_by table); ``f.value`` is the raw number for ``{% if f.value > 0 %}``.
    """

    __slots__ = ("_record", "label")

    def __init__(self, record: Mapping[str, Any], label: str = "") -> None:
        self._record = record
        self.label = label

    @property
    def value(self) -> Any:
        return self._record["value"]

    @property
    def text(self) -> str:
        return str(self._record["text"])

    @property
    def of(self) -> "FigureView":
        if "of" not in self._record:
            raise AttributeError("of")
        return FigureView(self._record["of"], "of")

    @property
    def rows(self) -> list["FigureView"]:
        return [FigureView(record, name) for name, record in self._record.get("parts", {}).items()]

    def __getattr__(self, name: str) -> "FigureView":
        # Only reached for names that are not the attributes above: the figure's parts.
        if name.startswith("_"):
            raise AttributeError(name)
        parts = self._record.get("parts", {})
        if name not in parts:
            raise AttributeError(name)
        return FigureView(parts[name], name)

    def __getitem__(self, name: str) -> "FigureView":
        parts = self._record.get("parts", {})
        if name not in parts:
            raise KeyError(name)
        return FigureView(parts[name], name)

    def __iter__(self) -> Iterator["FigureView"]:
        return iter(self.rows)

    def __str__(self) -> str:
        return self.text

    def __html__(self) -> str:
        # Figure texts are digits, signs and names; escape anyway, they may be read from a file.
        return str(jinja2.utils.markupsafe.escape(self.text))


def views(records: Mapping[str, Mapping[str, Any]]) -> dict[str, FigureView]:
    """Each stored figure record (provenance.json's ``figures``) as a view a template can print."""
    return {name: FigureView(record, name) for name, record in records.items()}


def records(values: Mapping[str, FigureValue]) -> dict[str, dict[str, Any]]:
    """Each computed figure's stored record: what provenance.json's ``figures`` holds, minus specs."""
    return {name: value.record() for name, value in values.items()}


def text_environment() -> SandboxedEnvironment:
    """The sandbox figure texts are rendered in: undefined names fail, nothing is escaped. It is
    the pages' bounded one: verify renders the texts a stranger's provenance.json holds."""
    from kitbuild.pages import bounded_environment

    return bounded_environment(autoescape=False)


def render_text(text: str, figures: Mapping[str, FigureView], label: str = "page", env: SandboxedEnvironment | None = None) -> str:
    """A short text (a figures_table ``page`` cell) with its ``{{ }}`` filled from ``figures``, in
    ``env`` (one :func:`text_environment` for all of a table's texts, whose limits they share)."""
    try:
        return (env or text_environment()).from_string(text).render(figures)
    except jinja2.TemplateSyntaxError as exc:
        raise FigureSpecError(f"{label}: the text does not parse as a template: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise FigureSpecError(f"{label}: names something that is not a figure or a part of one: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise FigureSpecError(f"{label}: cannot be rendered: {exc}") from None
