"""``readme.figures_table``: the page's 'Where each figure on the page comes from', and its checks.

Each row says what the page says (rendered with the figures), the kit files behind it and the
fields read from them. Verify checks that the files are in the kit and that each field is in at
least one of the row's files: a key in the JSON document or in some NDJSON row, a TSV column.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

import jinja2
from jinja2 import meta

from kitbuild.errors import KitbuildError
from kitbuild.figures.errors import FigureSpecError, Where, locate
from kitbuild.figures.files import Changed, KitFiles, KitReader, Unreadable, row_format
from kitbuild.figures.render import OTHER_TEMPLATES, FigureView, other_templates, render_text, text_environment, text_fault
from kitbuild.schema import first_schema_error, key_path, load_schema


def validate_figures_table(table: Any, where: Where | None = None, prefix: Sequence[str | int] = ("readme", "figures_table")) -> None:
    """Check ``readme.figures_table`` against its schema; raises :class:`FigureSpecError`."""
    schema = load_schema("figures")
    error = first_schema_error(table, {"$defs": schema["$defs"], "$ref": "#/$defs/figures_table"})
    if error:
        path, why = error
        raise FigureSpecError(f"{locate(where, [*prefix, *path])}: {why}")


def check_text_names(text: str, names: Collection[str], place: str, env: Any = None) -> None:
    """Check that ``text`` parses and names only figures; raises :class:`FigureSpecError` that
    starts with ``place`` and, for a name close to a figure's, asks whether that one was meant."""
    env = env or text_environment()
    try:
        parsed = env.parse(text)
        # (Compiled to find its names: a filter or test that does not exist fails here.)
        undeclared = meta.find_undeclared_variables(parsed)
    except jinja2.TemplateSyntaxError as exc:
        raise FigureSpecError(f"{place}: {text_fault(exc, env, text, names)}") from None
    except RecursionError:
        # jinja2 parses by recursion: thousands of nested brackets in one text.
        raise FigureSpecError(f"{place}: the text nests too deeply to be read as a template; write it plainly") from None
    if other_templates(parsed):
        raise FigureSpecError(f"{place}: {OTHER_TEMPLATES}")
    for name in sorted(undeclared):
        if name not in names:
            close = difflib.get_close_matches(name, sorted(names), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"the figures are: {', '.join(sorted(names)) or '(none)'}"
            raise FigureSpecError(f"{place}: names {name!r}, which is not a figure; {hint}")


def check_table_names(
    table: Sequence[Mapping[str, Any]],
    names: Collection[str],
    where: Where | None = None,
    prefix: Sequence[str | int] = ("readme", "figures_table"),
) -> None:
    """Check that each ``page`` text parses and names only figures; raises :class:`FigureSpecError`.

    Run when kit.yaml is loaded, before anything is counted, so a typo in a page text stops the
    build at its line. Parts (``{{ f.a_only }}``) can only be checked once the figures are computed.
    """
    env = text_environment()
    for number, row in enumerate(table):
        check_text_names(row["page"], names, locate(where, [*prefix, number, "page"]), env)


# The prose of kit.yaml that may cite figures as the page texts do (kitbuild 0.3.0 on).
PROSE_KEYS: tuple[tuple[str, ...], ...] = (("summary",), ("readme", "not_here"))


def _prose_texts(data: Mapping[str, Any]) -> list[tuple[list[str | int], str]]:
    """Each text of kit.yaml's prose (``summary``, ``readme.not_here``, each source's ``about``)
    with its key path."""
    texts: list[tuple[list[str | int], Any]] = []
    for keys in PROSE_KEYS:
        value: Any = data
        for step in keys:
            value = value.get(step) if isinstance(value, Mapping) else None
        texts.append((list(keys), value))
    sources = data.get("sources")
    for number, source in enumerate(sources if isinstance(sources, list) else []):
        texts.append((["sources", number, "about"], source.get("about") if isinstance(source, Mapping) else None))
    return [(steps, text) for steps, text in texts if isinstance(text, str)]


def check_prose_names(data: Mapping[str, Any], names: Collection[str], where: Where | None = None) -> None:
    """Check the figures that kit.yaml's prose (``summary``, ``readme.not_here``, each source's
    ``about``) cites, as :func:`check_table_names` checks the page texts; raises
    :class:`FigureSpecError` at the line of the first text that names something else."""
    env = text_environment()
    for steps, text in _prose_texts(data):
        check_text_names(text, names, locate(where, steps), env)


def render_prose(data: Mapping[str, Any], figures: Mapping[str, FigureView], where: Where | None = None) -> None:
    """Render kit.yaml's prose with the counted figures, so that a part no figure has stops a
    build at the text's line (exit 2), as a page text's does, rather than when the pages are."""
    env = text_environment()
    for steps, text in _prose_texts(data):
        if "{" in text:
            render_text(text, figures, locate(where, steps), env)


def render_figures_table(
    table: Sequence[Mapping[str, Any]],
    figures: Mapping[str, FigureView],
    where: Where | None = None,
    prefix: Sequence[str | int] = ("readme", "figures_table"),
) -> list[dict[str, Any]]:
    """The table's rows with each ``page`` text rendered: ``[{page, files, fields}]``, for templates.

    ``where`` places an error at its kit.yaml line (the build's way); without it the error names
    the row by its key path only.
    """
    def label(number: int) -> str:
        path = [*prefix, number, "page"]
        return locate(where, path) if where else key_path(path)

    env = text_environment()  # one clock for the whole table: each row's own would add up
    return [
        {
            "page": render_text(row["page"], figures, label(number), env),
            "files": list(row["files"]),
            "fields": list(row.get("fields", [])),
        }
        for number, row in enumerate(table)
    ]


@dataclass(frozen=True)
class TableProblem:
    """A figures_table row naming a file the kit lacks (``kind='file'``) or a field no file has (``'field'``)."""

    row: int
    kind: str
    name: str
    detail: str

    def message(self) -> str:
        return f"readme.figures_table[{self.row}]: {self.detail}"


def _steps(field: str) -> list[str]:
    """A field as steps: a JSON pointer's, or a dotted path's, with '[]' after a key for 'each item'."""
    if field.startswith("/"):
        return [s.replace("~1", "/").replace("~0", "~") for s in field[1:].split("/")]
    steps = []
    for part in field.split("."):
        if part.endswith("[]"):
            steps += [part[:-2], "[]"]
        else:
            steps.append(part)
    return steps


def _has(document: Any, steps: Sequence[str]) -> bool:
    if not steps:
        return True
    head, rest = steps[0], steps[1:]
    if head == "[]":
        return isinstance(document, list) and any(_has(item, rest) for item in document)
    if isinstance(document, dict) and head in document:
        return _has(document[head], rest)
    if isinstance(document, list) and head.isdigit() and int(head) < len(document):
        return _has(document[int(head)], rest)
    return False


def _file_has(reader: KitReader, path: str, field: str) -> bool:
    fmt = row_format(path)
    if fmt == "json":
        return _has(reader.json(path), _steps(field))
    rows = reader.rows(path)
    if rows.format == "tsv":
        return field.lstrip("/") in (rows.columns or ())
    steps = _steps(field)
    return any(_has(row.data, steps) for row in rows.rows)


def table_problems(table: Sequence[Mapping[str, Any]], kit: KitFiles) -> list[TableProblem]:
    """Every file a row names that the kit lacks, and every field none of its files has."""
    reader = KitReader(kit)
    problems = []
    for number, row in enumerate(table):
        readable = []
        for path in row["files"]:
            try:
                with kit.open(path):
                    pass
            except (OSError, KitbuildError):
                problems.append(TableProblem(number, "file", path, f"names {path}, which is not in the kit"))
                continue
            readable.append(path)
        changed: dict[str, str] = {}  # a file whose bytes are not the ones hashed: no field is known
        for field in row.get("fields", []):
            found = False
            for path in readable:
                try:
                    if path not in changed and _file_has(reader, path, field):
                        found = True
                        break
                except Changed as exc:
                    changed[path] = str(exc)
                except Unreadable:
                    # A file kitbuild cannot parse (a log, a binary) can be named; fields are looked for elsewhere.
                    continue
            if not found and readable and not changed:
                files = ", ".join(readable)
                problems.append(TableProblem(number, "field", field, f"names the field {field!r}, which none of its files has ({files})"))
        problems += [TableProblem(number, "file", path, f"names {why}") for path, why in changed.items()]
    return problems

