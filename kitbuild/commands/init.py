"""``kitbuild init``: a starter kit.yaml from the bench folders themselves.

The scan (:mod:`kitbuild.scan`) finds the paths, machine names and digests the records print;
this module turns them into a config and writes it. Each proposal is written beside the files
and counts it rests on, as YAML comments, because the researcher has to judge it. What only the
researcher can know (the role a machine played, what an external digest is, the kit path of a
prefix that names no folder here) is written as an empty string marked ``FILL IN``: every such
key's schema refuses an empty value, so the config does not build until each one is filled.
"""

from __future__ import annotations

import datetime
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import orjson

from kitbuild.config import DEFAULT_CONFIG, FILL_IN, check_writable_place
from kitbuild.errors import ConfigError
from kitbuild.commands.build import Work, write_file
from kitbuild.gate import gate_code
from kitbuild.findings import Finding
from kitbuild.matchers import Matcher
from kitbuild.lines import blocks_of, locate
from kitbuild.observe import Plan
from kitbuild.parallel import map_files
from kitbuild.scan import VCS_GLOBS, BenchScan, scan_bench

# Files listed under one proposal before the rest are summed up; kit.yaml stays readable.
SHOWN_FILES = 8
SHOWN_LEAKS = 200

_PLAIN = re.compile(r"^(?:\./)?[A-Za-z0-9_/][A-Za-z0-9_./+@~-]*$")
_YAML_WORDS = re.compile(r"^(?:true|false|yes|no|on|off|null|y|n|~)$", re.IGNORECASE)
_NUMBERISH = re.compile(r"^[-+.0-9][-+.0-9_eE:]*$")


@dataclass(frozen=True)
class InitReport:
    """What init wrote and what is left for the researcher to fill in."""

    config: Path
    text: str
    sources: int
    maps: int
    maps_to_fill: int
    names: int
    digests: int
    leaks: int

    @property
    def to_fill(self) -> int:
        return self.maps_to_fill + self.names + self.digests


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it reads back as the same string, else double-quoted."""
    if _PLAIN.match(text) and not _YAML_WORDS.match(text) and not _NUMBERISH.match(text):
        return text
    return orjson.dumps(text).decode("utf-8")  # a JSON string is a valid YAML double-quoted scalar


def _times(n: int) -> str:
    return f"{n} time{'s' if n != 1 else ''}"


def _printed_comment(printed: Counter[str], indent: str, lead: str) -> list[str]:
    total = sum(printed.values())
    lines = [f"{indent}# {lead}printed {_times(total)} in {len(printed)} file{'s' if len(printed) != 1 else ''}:"]
    for kit_path in sorted(printed)[:SHOWN_FILES]:
        lines.append(f"{indent}#   {kit_path}: {printed[kit_path]}")
    if len(printed) > SHOWN_FILES:
        lines.append(f"{indent}#   and {len(printed) - SHOWN_FILES} more files")
    return lines


def _kit_name(config_dir: Path) -> str:
    name = re.sub(r"[^a-z0-9._-]+", "-", config_dir.name.lower()).lstrip("._-")
    return name or "data-kit"


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _source_path(folder: Path, config_dir: Path) -> str:
    """The folder as kit.yaml names it: relative when it lies beside or below kit.yaml."""
    if _inside(folder, config_dir):
        return folder.relative_to(config_dir).as_posix() or "."
    return str(folder)


def _out_name(scan: BenchScan, config_dir: Path) -> str:
    """``./kit``, unless that folder would hold one of the sources."""
    n = 1
    while True:
        name = "kit" if n == 1 else f"kit-{n}"
        out = config_dir / name
        if not any(_inside(f.real, out.resolve()) or _inside(f.path, out) for f in scan.folders):
            return f"./{name}"
        n += 1


def leak_findings(scan: BenchScan, jobs: int = 1) -> list[Finding]:
    """What the leak gate would still find once every proposal is filled in."""
    sources = {form: f.as_ for f in scan.folders for form in f.absolute_forms()}
    # A prefix left to fill in is taken as filled: its findings are already the researcher's to
    # decide at its map entry, and repeating them below would only hide the ones no entry covers.
    pairs = {**sources, **{m.prefix: m.kit_path or "fill-in" for m in scan.maps}}
    names = {h.name: "role" for h in scan.hosts}
    matchers: list[Matcher | None] = [Matcher("path_prefix", pairs=pairs)]
    if names:
        matchers.append(Matcher("literal_names", pairs=names))
    private = {k: "a private path the rules above rewrite" for k in pairs}
    private.update({k: "a machine name the rules above rewrite" for k in names})
    with tempfile.TemporaryDirectory(prefix="kitbuild-init-") as scratch:
        jobs_list = [(str(src), kit_path, os.path.join(scratch, str(n))) for n, (kit_path, src) in enumerate(scan.files)]
        results = map_files(write_file, Work(matchers, Plan(private=private), False), jobs_list, [0] * len(jobs_list), jobs)
        found: list[Finding] = []
        for (_, kit_path, dst), result in zip(jobs_list, results):
            leaks = result.observation.leaks
            if not leaks:
                continue
            with open(dst, "rb") as stream:
                places = locate(blocks_of(stream), [leak.offset for leak in leaks])
            for leak in leaks:
                line, col = places.get(leak.offset, (None, None))
                found.append(Finding(gate_code(leak.code), kit_path, f"column {col}: {leak.what}" if col else leak.what, line=line))
    return sorted(set(found), key=lambda f: (f.path, f.line or 0, f.message))


def starter_config(scan: BenchScan, config_dir: Path, date: str, leaks: Sequence[Finding]) -> str:
    """The text of the starter kit.yaml for ``scan``, to be written in ``config_dir``."""
    kit = _kit_name(config_dir)
    lines = [
        f"# kit.yaml for {kit}, written by 'kitbuild init'. This file is private: it names the bench's",
        "# folders, the paths its records print and its machines. Before the first build:",
        f"#   1. replace every empty value marked {FILL_IN} (kitbuild refuses the config until each is filled);",
        "#   2. read the comments beside each proposal, and the leak-gate notes at the end;",
        "#   3. run 'kitbuild build --dry-run' and read what each rule would change.",
        "# Every key is described in docs/config.md; 'kitbuild schema config' prints the schema.",
        f"kit: {_scalar(kit)}",
        f"title: {_scalar(kit + ': the data kit')}",
        f"date: {_scalar(date)}  # the only date that may enter the kit",
        "# licence: CC-BY-4.0  # the licence of the kit's records and pages",
        f"out: {_scalar(_out_name(scan, config_dir))}",
        "sources:",
    ]
    for folder in scan.folders:
        count = sum(1 for kit_path, _ in scan.files if kit_path.startswith(folder.as_ + "/"))
        lines += [
            f"  - path: {_scalar(_source_path(folder.path, config_dir))}  # {count} file{'s' if count != 1 else ''}",
            f"    as: {_scalar(folder.as_)}",
            "    # about: \"...\"  # the README's line for this folder",
        ]
        if folder.index in scan.excluded:
            globs, left_out = scan.excluded[folder.index]
            if not set(globs) & set(VCS_GLOBS):
                lines += [
                    f"    # {left_out} log file{'s' if left_out != 1 else ''} left out: logs rarely belong in a kit and often print private",
                    "    # paths and machine names. Delete the exclude line to publish them (init did not scan them).",
                ]
            else:
                lines += [
                    f"    # {left_out} file{'s' if left_out != 1 else ''} of logs and version control left out: they rarely belong in a kit, and",
                    "    # print private paths, machine names and authors' e-mail addresses (a .git folder holds every",
                    "    # file ever committed). Delete the exclude line to publish them (init did not scan them).",
                ]
            lines.append("    exclude: [" + ", ".join(_scalar(g) for g in globs) + "]")

    lines.append("rules:")
    if not scan.maps and not scan.own_printed:
        # A rule that fires nowhere is reported by every build (KB906): proposed only when needed.
        lines.append("  # - use: record-path-to-kit-path  # no record prints a path to map (a system one, /usr/…, needs none): add it if one ever does")
    else:
        lines.append("  - use: record-path-to-kit-path")
    if scan.maps:
        lines += ["    with:", "      map:"]
        for m in scan.maps:
            if m.kit_path is not None:
                lines += _printed_comment(m.printed, "        ", f"the folder published as {m.kit_path}: ")
                lines.append(f"        {_scalar(m.prefix)}: {_scalar(m.kit_path)}")
            else:
                lines += _printed_comment(m.printed, "        ", "names no file or folder here: ")
                lines += [
                    f"        # {FILL_IN}: the kit path it stands for; or, if these files are not published, delete this",
                    "        # entry and exclude the records that print it (the leak gate reports what is left).",
                    f"        {_scalar(m.prefix)}: \"\"",
                ]
    elif scan.own_printed:
        lines.append("    # no record prints an absolute path other than the folders' own, which the rule maps without an entry")

    if scan.hosts:
        lines += ["  - use: box-name-to-role", "    with:", "      names:"]
        for h in scan.hosts:
            if h.short_of is not None:
                lines.append(f"        # the short form of {h.short_of}")
            else:
                fields = ", ".join(sorted(h.fields))
                lines += _printed_comment(h.printed, "        ", f"in {fields}: ")
            lines.append(f"        {_scalar(h.name)}: \"\"  # {FILL_IN}: the role this machine played, e.g. desktop")
        fields = ", ".join(sorted({f for h in scan.hosts for f in h.fields}))
        lines.append(f"      # fields: [{fields}]  # to rewrite these names only inside those fields")
    else:
        lines.append("  # box-name-to-role: no host-like value was found in a route, host, hostname, machine, node, box or server field")

    date_word = re.sub(r"[^A-Za-z0-9._-]", "-", date)
    lines += [
        "  - use: digest-withheld",
        "    with:",
        f"      placeholder: {_scalar('withheld-' + date_word)}",
    ]

    if scan.digests:
        lines += [
            "# sha256 digests the records print that match no file in the sources. Say what each is; or, if a",
            "# digest is of a file you mean to publish, add that file to a source instead.",
            "external_digests:",
        ]
        for d in scan.digests:
            lines += _printed_comment(d.printed, "  ", "")
            lines.append(f"  {d.hex}: \"\"  # {FILL_IN}: what this file is, e.g. 'the public dataset's release file'")

    lines.append("")
    if leaks:
        lines += [
            "# The leak gate: with every proposal above filled in, a build would still stop on these findings",
            "# (kit path:line:col), which no rule rewrites. For each, add a map entry, exclude the file",
            "# (sources[N].exclude), or, for a path that names no person or machine, an allow entry:",
        ]
        for leak in leaks[:SHOWN_LEAKS]:
            lines.append(f"#   {leak}")
        if len(leaks) > SHOWN_LEAKS:
            lines.append(f"#   and {len(leaks) - SHOWN_LEAKS} more; 'kitbuild build --dry-run' lists them all")
        lines += [
            "# allow:",
            "#   - {text: \"/usr/lib/python3\", why: \"a system path, names no person or machine\"}",
        ]
    else:
        lines.append("# The leak gate: with every proposal above filled in, no record holds a private-path shape it would stop on.")
    return "\n".join(lines) + "\n"


def init(
    sources: Iterable[str | os.PathLike[str]],
    config_path: str | os.PathLike[str] = DEFAULT_CONFIG,
    *,
    force: bool = False,
    date: str | None = None,
    jobs: int = 1,
) -> InitReport:
    """Scan ``sources`` and write a starter kit config at ``config_path``.

    Raises :class:`~kitbuild.errors.ConfigError` (exit 2) when a source is not a folder, the
    config would lie inside a source, or ``config_path`` exists and ``force`` is not set.
    """
    sources = list(sources)
    if not sources:
        raise ConfigError("init needs at least one SOURCE: the bench folders whose records the kit will publish.")
    label = str(config_path)
    target = Path(os.path.normpath(Path(config_path).absolute()))
    if target.is_dir():
        raise ConfigError(f"{label}: is a folder; give --config the path of the kit.yaml to write.")
    if target.exists() and not target.is_file():
        # Written with --force, a pipe would hold init until something read it; a device would take the text.
        raise ConfigError(f"{label}: is not a regular file (a pipe, a device or a socket); give --config the path of the kit.yaml to write.")
    if target.exists() and not force:
        raise ConfigError(f"{label}: already exists, and init never overwrites a config. Pass --force to replace it, or --config to write another file.")
    # Before the scan, which may take minutes: a config that could never be written stops here.
    check_writable_place(target, f"--config {label}")
    if date is None:
        date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    else:
        try:
            datetime.date.fromisoformat(date)
        except ValueError:
            raise ConfigError(f"--date: {date!r} is not a calendar date (YYYY-MM-DD).") from None
    scan = scan_bench(sources)
    config_dir = target.parent
    for folder in scan.folders:
        if _inside(config_dir.resolve(), folder.real):
            raise ConfigError(
                f"{label}: would lie inside SOURCE {folder.index + 1}, and be published with it. Write it beside the bench folders (--config)."
            )
    leaks = leak_findings(scan, jobs)
    text = starter_config(scan, config_dir, date, leaks)
    try:
        config_dir.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        # What the look before the scan could not tell (a disk full, a folder made read-only since).
        raise ConfigError(f"--config {label}: cannot be written ({exc.strerror}). Choose a place you can write to.") from None
    return InitReport(
        config=target,
        text=text,
        sources=len(scan.folders),
        maps=len(scan.maps),
        maps_to_fill=sum(1 for m in scan.maps if m.kit_path is None),
        names=len(scan.hosts),
        digests=len(scan.digests),
        leaks=len(leaks),
    )


def init_text(report: InitReport, label: str) -> str:
    """The summary init prints."""
    def n(k: int, word: str) -> str:
        return f"{k} {word}{'' if k == 1 else 's'}"

    lines = [
        f"wrote {label}: {n(report.sources, 'source')}, {n(report.maps, 'map entry').replace('entrys', 'entries')}, "
        f"{n(report.names, 'machine name')}, {n(report.digests, 'external digest')}",
    ]
    if report.to_fill:
        parts = [n(report.maps_to_fill, "map entry").replace("entrys", "entries"), n(report.names, "role"), n(report.digests, "external digest")]
        kinds = [p for p, k in zip(parts, (report.maps_to_fill, report.names, report.digests)) if k]
        lines.append(f"  {n(report.to_fill, 'value')} to fill in (marked {FILL_IN}): {', '.join(kinds)}")
    if report.leaks:
        lines.append(f"  {n(report.leaks, 'leak-gate finding')} no proposed rule covers: see the notes at the end of {label}")
    if report.to_fill:
        todo = f"write in the {n(report.to_fill, 'value')} marked {FILL_IN}"
    elif report.leaks:
        todo = f"settle the leak-gate notes at the end of {label}"
    else:
        todo = f"read {label} (a licence and each folder's 'about' are yours to add)"
    lines.append(f"next: {todo}, then run 'kitbuild build --dry-run {label}'")
    return "\n".join(lines)
