"""The one loader of kit.yaml.

The file is parsed (``kitbuild.yamlfile``), checked against ``schemas/config.schema.json``, and
then against what a schema cannot know: that sources exist and do not overlap, that ``out`` is
not inside a source, that each rule exists and its ``with:`` fits that rule's own schema. Every
problem is a :class:`ConfigError` naming ``kit.yaml:line:col`` and the key path. Messages name
keys and lines, never the private values themselves, so a CI log of a failed build publishes
nothing private.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from kitbuild.errors import ConfigError, RuleError
from kitbuild.index import TEMPLATES_DIR, WRITTEN
from kitbuild.rules import BUILTIN_RULES, Rule, builtin_rule, resolve_rule
from kitbuild.schema import SchemaProblem, first_schema_problem, key_path, load_schema, nearest, property_names, public_key_path
from kitbuild.yamlfile import YamlDocument, load_yaml, shown_path

DEFAULT_CONFIG = "kit.yaml"
DEFAULT_OUT = "./kit"


@dataclass(frozen=True)
class Source:
    """A private folder and the kit folder it becomes."""

    index: int
    path: Path  # absolute, as the config names it (symlinks not resolved)
    real: Path  # the same, symlinks resolved
    as_: str
    about: str | None
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    given: str  # the path exactly as written in kit.yaml

    def absolute_forms(self) -> list[str]:
        """Every absolute spelling of this folder a record might print."""
        return sorted({str(self.path), str(self.real)})


@dataclass(frozen=True)
class RuleUse:
    """One entry of ``rules:``: a rule and its parameters."""

    index: int
    rule: Rule
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Config:
    """A loaded, checked kit.yaml."""

    path: Path
    label: str
    data: Mapping[str, Any]
    kit: str
    title: str
    date: str
    licence: str | None
    summary: str | None
    out: Path
    sources: tuple[Source, ...]
    rules: tuple[RuleUse, ...]
    allow: tuple[Mapping[str, str], ...]
    external_digests: Mapping[str, str]
    readme_template: Path | None
    not_here: str | None
    document: YamlDocument = field(repr=False, compare=False, hash=False)
    # The figures block and readme.figures_table as written (docs/figures.md), already checked.
    figures: Mapping[str, Any] = field(default_factory=dict)
    figures_table: tuple[Mapping[str, Any], ...] = ()

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def source_map(self) -> dict[str, str]:
        """Each source's absolute forms -> its kit folder (what record-path-to-kit-path maps)."""
        return {form: s.as_ for s in self.sources for form in s.absolute_forms()}

    def private_strings(self) -> dict[str, str]:
        """Private text the config names, each with a description that names no private value."""
        private: dict[str, str] = {}
        for s in self.sources:
            for form in s.absolute_forms():
                private[form] = f"the private path of sources[{s.index}] ({s.as_})"
            given = s.given.rstrip("/")
            if "/" in given.lstrip("./"):
                # A relative spelling with a folder in it is as telling as the absolute one.
                private.setdefault(given.lstrip("./"), f"the path of sources[{s.index}] as kit.yaml gives it")
        for use in self.rules:
            private.update({k: d + f" (rules[{use.index}])" for k, d in use.rule.matcher(use.params).private_strings().items() if k})
        # An allow entry may cover generic shapes, never a string the config itself names private.
        return private

    def public(self) -> dict[str, Any]:
        """What pages and provenance.json may show of the config: nothing private."""
        return {
            "kit": self.kit,
            "title": self.title,
            "date": self.date,
            "licence": self.licence,
            "summary": self.summary,
            "sources": [{"as": s.as_, "about": s.about} for s in self.sources],
            "allow": [dict(a) for a in self.allow],
            "external_digests": dict(self.external_digests),
            "not_here": self.not_here,
        }


# Every name a build writes at the kit's root (kitbuild.index.WRITTEN, and the folder of a README
# template): a source's kit folder by one of these names would collide with it.
_WRITTEN_AT_ROOT = frozenset(name.casefold() for name in (*WRITTEN, TEMPLATES_DIR))


def _names_a_file(use: str) -> bool:
    # As kitbuild.rules.resolve_rule reads 'use': a path names a rule file; anything else an id.
    return "/" in use or use.endswith((".yaml", ".yml"))


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,39}")


def _schema_failure(
    doc: YamlDocument,
    problem: SchemaProblem,
    data: Any,
    schema: Mapping[str, Any] | None,
    prefix: str,
    after: str,
    inner: Any = None,
    inner_schema: Mapping[str, Any] | None = None,
    inner_prefix: str = "",
    inner_from: int = 0,
) -> ConfigError:
    """A schema violation as a message: ``kit.yaml:line:col: key.path: what; what to do``.

    The key path spells out the schema's own keys and shows any other by position (see
    :func:`public_key_path`); ``inner*`` describe a document nested at ``problem.path[:inner_from]``
    (a rule's ``with:``, checked against the rule's own schema). An unknown key is placed at the
    key itself, named when it reads as a key name, with the key the writer may have meant.
    """
    path = problem.path
    if inner_schema is not None:
        shown = public_key_path(path[inner_from:], inner, inner_schema, prefix=inner_prefix)
    else:
        shown = public_key_path(path, data, schema or {}, prefix=prefix)
    if problem.unknown_key is None:
        message = problem.message
        about = _description(inner_schema if inner_schema is not None else schema, path[inner_from:] if inner_schema is not None else path)
        if message.startswith(("does not have the required form", "matches none of the forms")) and about:
            # A pattern (or a choice of forms) says what is refused, not what is wanted: the key's
            # own description does.
            message += f"; it is {about[0].lower()}{about[1:].rstrip('.')}"
        return ConfigError(f"{doc.where(path)}: {shown}: {message}{after}")
    key = problem.unknown_key
    where = doc.key_where([*path, key])
    if _PLAIN_KEY.fullmatch(key):
        shown = f"{shown}.{key}" if shown != "(top level)" else key
        what = "unknown key"
    else:
        # A key that does not read as a name may be anything (a pasted private path): line:col
        # points at it, and the message does not repeat it.
        what = "unknown key (shown at its line)"
    maybe = f"; did you mean {problem.suggestion!r}?" if problem.suggestion else "."
    allowed = ", ".join(problem.allowed) or "none"
    return ConfigError(f"{where}: {shown}: {what}{maybe} The keys allowed here are: {allowed}{after}")


def _description(schema: Mapping[str, Any] | None, path: list[str | int]) -> str:
    """The schema's description of the key at ``path`` ('' when it has none)."""
    node: Any = schema or {}
    for step in path:
        if not isinstance(node, Mapping):
            return ""
        node = node.get("items", {}) if isinstance(step, int) else node.get("properties", {}).get(step, {})
    return str(node.get("description", "")) if isinstance(node, Mapping) else ""


# The mark ``kitbuild init`` puts on each value it leaves to the researcher (kitbuild.commands.init).
FILL_IN = "FILL IN"

# What each value init leaves empty asks for, by the key of the mapping that holds it.
_TO_FILL = {
    "names": "the role this machine played: a public word, such as desktop",
    "external_digests": "what the file with this digest is, such as \"the public dataset's release file\"",
    "map": "the kit path this printed path stands for; or delete the entry and exclude the records that print it",
}


def _refuse_unfilled(doc: YamlDocument) -> None:
    """Refuse a config with values ``kitbuild init`` left empty, naming each one and what it asks
    for: a first build then says exactly what to add, all at once, not one schema error at a time."""
    todo = doc.marked_empty(FILL_IN)
    if not todo:
        return
    public = _public_keys()
    lines = [f"{doc.label}: {len(todo)} value{'s' if len(todo) != 1 else ''} marked {FILL_IN} {'are' if len(todo) != 1 else 'is'} still empty; write each one in:"]
    for steps, line, col in todo:
        holder = next((step[0] for step in reversed(steps[:-1]) if isinstance(step, tuple)), "")
        what = _TO_FILL.get(holder, "the value its comment asks for")
        lines.append(f"  {doc.label}:{line}:{col}: {shown_path(steps, public)}: {what}")
    lines.append("Then run 'kitbuild build --dry-run' again.")
    raise ConfigError("\n".join(lines))


def _fail(doc: YamlDocument, path: list[str | int], what: str) -> ConfigError:
    return ConfigError(f"{doc.where(path)}: {key_path(path)}: {what}")


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _check_out_against(sources: list[Source] | tuple[Source, ...], out: Path, where: str) -> None:
    try:
        out_real = out.resolve()
    except (RuntimeError, OSError):  # a symlink loop on the way (RuntimeError before Python 3.13)
        raise ConfigError(f"{where}: its path goes through a symlink loop, so no kit can be written there. Choose another folder.") from None
    for s in sources:
        if _inside(out_real, s.real):
            raise ConfigError(f"{where}: the kit would be written inside sources[{s.index}] ({s.as_}); kitbuild never writes inside a source. Choose a folder outside it.")
        if _inside(s.real, out_real):
            raise ConfigError(f"{where}: sources[{s.index}] ({s.as_}) lies inside it, and a build replaces that folder. Choose a folder outside it.")


TEMPLATE_MAX = 1 << 20

# A build stages the kit beside its folder under a longer name (".<name>.kitbuild-XXXXXXXX"), so
# the folder's own name must leave room below the usual 255-byte limit of a file name.
OUT_NAME_MAX = 200


def check_writable_place(out: Path, where: str) -> None:
    """Refuse a place nothing could be written, before anything is: a name too long, a path
    through a file, a read-only file system or one that stores no files at all (/proc, /sys), a
    folder the user may not write in. Only what can be told without writing; the messages name
    no path (``where`` says which: '--out', '--config')."""
    for part in out.parts:
        if len(os.fsencode(part)) > OUT_NAME_MAX:
            raise ConfigError(f"{where}: a folder name in it is {len(os.fsencode(part))} bytes long, more than the {OUT_NAME_MAX} a build can use. Choose a shorter one.")
    # The build writes in the folder that holds the kit's folder, created if missing: look at
    # the nearest folder that exists on the way there.
    above = out.parent
    while not os.path.lexists(above) and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise ConfigError(f"{where}: cannot be made: a part of its path is a file, not a folder. Choose another folder.")
    try:
        fs = os.statvfs(above)
    except (OSError, AttributeError):  # no statvfs (Windows), or it failed: the build will tell
        return
    if fs.f_flag & os.ST_RDONLY:
        raise ConfigError(f"{where}: is on a read-only file system. Choose a folder on a disk you can write to.")
    if fs.f_blocks == 0:
        # A file system with no blocks to keep a file in: the kernel's views (/proc, /sys).
        raise ConfigError(f"{where}: is on a file system that cannot hold files (such as /proc or /sys). Choose a folder on a disk you can write to.")
    if not os.access(above, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: cannot be written: permission denied on the folder that would hold it. Choose a folder you can write to.")


def check_out(config: Config, out: Path, where: str) -> None:
    """Refuse an output folder inside a source, one that holds a source, or one no build could write."""
    _check_out_against(config.sources, out, where)
    check_writable_place(out, where)


def _public_keys() -> frozenset[str]:
    """The keys a message may spell out: the config's and the figures' schema keys, and the
    built-in rules' parameters; a key the user chose (a private path in ``map``) is not one."""
    params = {name for rule_id in BUILTIN_RULES for name in builtin_rule(rule_id).params.get("properties", {})}
    return property_names("config", "figures") | params


def load_config(path: str | os.PathLike[str] = DEFAULT_CONFIG) -> Config:
    """Load and check a kit config; raises :class:`ConfigError` naming file, line and key."""
    label = str(path)
    config_path = Path(path).absolute()
    doc = load_yaml(config_path, label, _public_keys)
    data = doc.data
    if data is None:
        raise ConfigError(f"{label}: the file is empty. A kit config needs at least kit, title, date and sources; see docs/config.md, 'A whole config'.")
    _refuse_unfilled(doc)
    bad = first_schema_problem(data, load_schema("config"))
    if bad:
        raise _schema_failure(doc, bad, data, load_schema("config"), "", ". See docs/config.md, 'Every key'.")
    try:
        datetime.date.fromisoformat(data["date"])
    except ValueError:
        raise _fail(doc, ["date"], "is not a real calendar date (YYYY-MM-DD)") from None
    base = config_path.parent

    sources = []
    for i, entry in enumerate(data["sources"]):
        given = entry["path"]
        src = Path(given) if Path(given).is_absolute() else base / given
        src = Path(os.path.normpath(src))
        if not src.is_dir():
            raise _fail(doc, ["sources", i, "path"], "no such folder. Relative paths are relative to the folder that holds kit.yaml.")
        sources.append(
            Source(i, src, src.resolve(), entry["as"], entry.get("about"), tuple(entry.get("include", ())), tuple(entry.get("exclude", ())), given)
        )
    for s in sources:
        if s.as_.casefold() in _WRITTEN_AT_ROOT:
            raise _fail(doc, ["sources", s.index, "as"], "is the name of a file the build writes at the kit's root (or differs from one only in case, which a Windows or macOS disk cannot tell apart). Give the source another 'as'")
    seen: dict[str, int] = {}
    for s in sources:
        if s.as_ in seen:
            raise _fail(doc, ["sources", s.index, "as"], f"sources[{seen[s.as_]}] is published as the same kit folder; give each source its own 'as'")
        seen[s.as_] = s.index
    for a in sources:
        for b in sources:
            if a.index != b.index and _inside(a.real, b.real):
                raise _fail(doc, ["sources", a.index, "path"], f"lies inside sources[{b.index}]; a file would be published twice. Use include/exclude on one source instead")

    out = Path(os.path.normpath(base / data.get("out", DEFAULT_OUT)))
    where = doc.where(["out"]) + ": out" if "out" in data else f"{label}: out (default {DEFAULT_OUT})"
    _check_out_against(sources, out, where)

    rules = []
    for i, entry in enumerate(data.get("rules", [])):
        use = entry["use"]
        if use not in BUILTIN_RULES and not _names_a_file(use):
            near = nearest(use, BUILTIN_RULES)
            maybe = f"; did you mean {near!r}?" if near else "."
            raise ConfigError(
                f"{doc.where(['rules', i, 'use'])}: rules[{i}].use: no such rule: {use!r}{maybe} The built-in rules are: "
                f"{', '.join(BUILTIN_RULES)}; a rule file is named by its path."
            )
        try:
            rule = resolve_rule(use, base)
        except ConfigError as exc:  # a RuleError, or the rule file's YAML (load_yaml's errors)
            raise ConfigError(f"{doc.where(['rules', i, 'use'])}: rules[{i}].use: {exc.message}") from None
        params = entry.get("with", {})
        problem = first_schema_problem(dict(params), dict(rule.params))
        if problem:
            placed = SchemaProblem(["rules", i, "with", *problem.path], problem.message, problem.unknown_key, problem.allowed, problem.suggestion)
            raise _schema_failure(doc, placed, data, None, "", f" (rule {rule.id!r}; see docs/rules.md, 'Built-in rules')", params, rule.params, f"rules[{i}].with", 3)
        try:
            rule.matcher(params)  # a pattern or replacement that cannot work, found before any file is read
        except RuleError as exc:
            key = "pattern" if "its pattern" in exc.message else "replace"
            raise _fail(doc, ["rules", i, "with", key] if key in params else ["rules", i, "use"], f"{exc.message} (rule {rule.id!r})") from None
        rules.append(RuleUse(i, rule, params))

    readme = data.get("readme", {})
    template = None
    if "template" in readme:
        template = base / readme["template"]
        if not template.is_file():
            why = "is not a regular file (a folder, a pipe or a device)" if template.exists() else "no such template file (relative to kit.yaml)"
            raise _fail(doc, ["readme", "template"], why)
        if template.stat().st_size > TEMPLATE_MAX:  # read whole by the build: a page's template is a few KiB
            raise _fail(doc, ["readme", "template"], f"is larger than {TEMPLATE_MAX >> 20} MiB; give the page's template, not data")

    # Checked here, before any file is read, so a typo stops at its kit.yaml line (exit 2); whether
    # the kit's files can back each figure is the build's question (exit 1).
    figures = data.get("figures", {})
    figures_table = readme.get("figures_table", [])
    if figures != {}:  # the recounts and their schemas are imported only for a kit with figures
        from kitbuild.figures.evaluation import validate_figures

        validate_figures(figures, doc.where, parts=True, key_where=doc.key_where)
    if figures_table != []:  # an empty table, as almost every kit.yaml has, passes both checks
        # (Imported only here: with them comes jinja2, 25 ms of a build's start, which would
        # otherwise be taken before its workers fork, and by each as they start.)
        from kitbuild.figures.table import check_table_names, validate_figures_table

        validate_figures_table(figures_table, doc.where)
        check_table_names(figures_table, figures, doc.where)
    if _cites(data):  # prose that cites a figure ({{ name }}) names one the kit counts
        from kitbuild.figures.table import check_prose_names

        check_prose_names(data, figures, doc.where)

    return Config(
        path=config_path,
        label=label,
        data=data,
        kit=data["kit"],
        title=data["title"],
        date=data["date"],
        licence=data.get("licence"),
        summary=data.get("summary"),
        out=out,
        sources=tuple(sources),
        rules=tuple(rules),
        allow=tuple(data.get("allow", ())),
        external_digests=dict(data.get("external_digests", {})),
        readme_template=template,
        not_here=readme.get("not_here"),
        document=doc,
        figures=figures,
        figures_table=tuple(figures_table),
    )


def _cites(data: Mapping[str, Any]) -> bool:
    """Whether kit.yaml's prose (summary, readme.not_here, a source's about) holds a template tag."""
    readme = data.get("readme")
    sources = data.get("sources")
    texts = [data.get("summary"), readme.get("not_here") if isinstance(readme, Mapping) else None]
    texts += [s.get("about") for s in (sources if isinstance(sources, list) else []) if isinstance(s, Mapping)]
    return any(isinstance(t, str) and ("{{" in t or "{%" in t) for t in texts)
