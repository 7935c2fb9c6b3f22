"""Figures on a page: what ``{{ bm25_every5 }}`` and ``{{ bm25_every5.of }}`` print.

A page is rendered from provenance.json alone (so verify can render it again from the kit), so
a :class:`FigureView` is built from a figure's stored record: its text, its ``of`` and its parts,
never from the rows. The same texts come out of :meth:`FigureValue.text`, so a page rendered
right after evaluation and one re-rendered from provenance.json agree byte for byte.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Iterator, Mapping

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

from kitbuild.figures.errors import FigureSpecError
from kitbuild.figures.value import FigureValue


class FigureView:
    """A figure as a template sees it.

    ``{{ f }}`` prints the text; ``{{ f.of }}`` the denominator; ``{{ f.a_only }}`` or
    ``{{ f["multi-session"] }}`` a part; ``{% for g in f.rows %}{{ g.label }}...`` walks the parts
    in order (a group_by table); ``f.value`` is the raw number for ``{% if f.value > 0 %}``.
    """

    __slots__ = ("_record", "label", "_name")

    def __init__(self, record: Mapping[str, Any], label: str = "", name: str = "") -> None:
        self._record = record
        self.label = label
        self._name = name or label  # the figure and its parts, dotted: what a message calls it

    @property
    def value(self) -> Any:
        return self._record["value"]

    @property
    def text(self) -> str:
        return str(self._record["text"])

    @property
    def of(self) -> "FigureView | jinja2.Undefined":
        if "of" not in self._record:
            return self._missing("of", f"figure {self._name!r} counts out of nothing: it has no 'of'")
        return FigureView(self._record["of"], "of", f"{self._name}.of")

    @property
    def rows(self) -> list["FigureView"]:
        return [FigureView(record, name, f"{self._name}.{name}") for name, record in self._record.get("parts", {}).items()]

    def __getattr__(self, name: str) -> "FigureView | jinja2.Undefined":
        # Only reached for names that are not the attributes above: the figure's parts.
        if name.startswith("_"):
            raise AttributeError(name)  # Python's own probes (copy, pickle): not a template's
        return self[name]

    def __getitem__(self, name: str) -> "FigureView | jinja2.Undefined":
        parts = self._record.get("parts", {})
        if name not in parts:
            # What a page may ask of a figure besides its parts: its 'of', when it counts out of one.
            known = [*parts, *(["of"] if "of" in self._record else [])]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else (f"; its parts are: {', '.join(parts)}" if parts else "; it has no parts")
            return self._missing(name, f"figure {self._name!r} has no part {name!r}{hint}")
        return FigureView(parts[name], name, f"{self._name}.{name}")

    def _missing(self, name: str, hint: str) -> jinja2.Undefined:
        # What the template gets instead of jinja2's own undefined, whose message would be
        # "'kitbuild.figures.render.FigureView object' has no attribute ...": a Python repr, in a
        # message for someone writing a page. Printing it, or anything but 'is defined', fails
        # with this hint; a template that asks '{% if f.of is defined %}' gets False.
        return jinja2.StrictUndefined(hint=hint, obj=self, name=name)

    def __iter__(self) -> Iterator["FigureView"]:
        return iter(self.rows)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        # What a page prints for a list or dict of figures ({{ figures }}): their texts, the same on
        # every run (object's own repr is the view's address).
        return repr(self.text)

    def __html__(self) -> str:
        # Figure texts are digits, signs and names; escape anyway, they may be read from a file.
        return str(jinja2.utils.markupsafe.escape(self.text))


def views(records: Mapping[str, Mapping[str, Any]]) -> dict[str, FigureView]:
    """Each stored figure record (provenance.json's ``figures``) as a view a template can print."""
    return {name: FigureView(record, name, name) for name, record in records.items()}


def records(values: Mapping[str, FigureValue]) -> dict[str, dict[str, Any]]:
    """Each computed figure's stored record: what provenance.json's ``figures`` holds, minus specs."""
    return {name: value.record() for name, value in values.items()}


def text_environment() -> SandboxedEnvironment:
    """The sandbox figure texts are rendered in: undefined names fail, nothing is escaped. It is
    the pages' bounded one: verify renders the texts a stranger's provenance.json holds."""
    from kitbuild.pages.sandbox import bounded_environment

    # A loader that holds no template: {% include %}, {% import %} and {% extends %} fail as
    # jinja2's TemplateNotFound (said in words below), not as "no loader", a Python TypeError.
    return bounded_environment(autoescape=False, loader=jinja2.DictLoader({}))


OTHER_TEMPLATES = (
    "includes, imports or extends another template, which a text kit.yaml writes cannot: its only "
    "names are the figures; write what it should say in the text itself"
)


def other_templates(tree: nodes.Template) -> bool:
    """Whether a text's template ``tree`` includes, imports or extends another template."""
    return next(tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)), None) is not None


def text_fault(exc: Exception, env: SandboxedEnvironment, text: str, names: Iterable[str]) -> str:
    """What is wrong with a page text (``exc`` raised while ``env`` read or rendered it), in the
    words of :mod:`kitbuild.pages.faults`: the figures are the only names a page text is given."""
    from kitbuild.pages.faults import UnknownName, describe

    if isinstance(exc, UnknownName) and exc.top:
        close = difflib.get_close_matches(str(exc.name), sorted(names), n=1)
        return f"names {exc.name!r}, which is not a figure" + (f"; did you mean {close[0]!r}?" if close else "")
    if isinstance(exc, jinja2.exceptions.SecurityError):
        return "names something that is not a figure or a part of one (a name starting with '_')"
    if isinstance(exc, jinja2.TemplateNotFound):
        return OTHER_TEMPLATES
    fault = describe(exc, env, "<text>", text)
    if isinstance(exc, jinja2.TemplateSyntaxError) and fault.text.startswith("it does not parse"):
        return f"the text does not parse as a template: {exc.message}"
    if isinstance(exc, jinja2.UndefinedError):
        return f"names something that is not a figure or a part of one: {fault.text}"
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return fault.text
    # A text of several lines: which one (a Python failure in an expression says only what kind it was).
    at = f"line {fault.line} of the text: " if fault.line is not None and "\n" in text.strip() else ""
    if isinstance(exc, jinja2.TemplateError):  # a limit of the sandbox, a call that failed in jinja2
        return f"cannot be rendered: {at}{fault.text}"
    # (Python's failure in an expression: {{ x + 1 }} adds a number to a figure, which is its text.)
    hint = "; a figure is its printed text: its number is {{ f.value }}" if isinstance(exc, TypeError) else ""
    return f"cannot be rendered: {at}{fault.text}{hint}"


def render_text(text: str, figures: Mapping[str, FigureView], label: str = "page", env: SandboxedEnvironment | None = None) -> str:
    """A short text (a figures_table ``page`` cell) with its ``{{ }}`` filled from ``figures``, in
    ``env`` (one :func:`text_environment` for all of a table's texts, whose limits they share)."""
    env = env or text_environment()
    try:
        tree = env.parse(text)
        if other_templates(tree):
            raise FigureSpecError(f"{label}: {OTHER_TEMPLATES}")
        return env.from_string(tree).render(figures)
    except FigureSpecError:
        raise
    except RecursionError:
        # jinja2 parses and compiles by recursion: thousands of nested brackets in one text.
        raise FigureSpecError(f"{label}: the text nests too deeply to be read as a template; write it plainly") from None
    except MemoryError:
        raise FigureSpecError(f"{label}: cannot be rendered: it ran out of memory; make it build less") from None
    except Exception as exc:  # noqa: BLE001 - whatever a text does is its writer's: {{ x + 1 }}, a division by zero
        # (A page text is the writer's own, as a kit's readme.template is: every failure in it is
        # said in words, at its key, never an internal error.)
        raise FigureSpecError(f"{label}: {text_fault(exc, env, text, figures)}") from None

