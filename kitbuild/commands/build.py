"""``kitbuild build``: private bench records in, a publishable data kit out.

The stages, each a module of its own: load the config (``config``), list the files
(``sources``), copy-rewrite-hash-scan each file in one streaming pass (``pipeline``), withhold the
digests of changed files until nothing more changes, write ``SHA256SUMS`` and ``index.json``
(``index``), ``provenance.json`` (``provenance``) and the pages (``pages``), run the leak gate
over all of it (``leaks``), and only then move the finished kit into place.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from kitbuild import index as kit_index
from kitbuild.config import DEFAULT_CONFIG, Config, check_out, load_config
from kitbuild.digests import DIGEST_LENGTH
from kitbuild.errors import ConfigError, LeakError
from kitbuild.entries import Entry
from kitbuild.jsonfile import dump_json
from kitbuild.leaks import LeakFinding, LeakScanner, distinct
from kitbuild.matchers import Matcher
from kitbuild.pipeline import FileJob, FileResult, Plan, run_files
from kitbuild.progress import SILENT, Progress
from kitbuild.provenance import provenance_json, rule_record
from kitbuild.rewrite import Event
from kitbuild.sources import list_files

if TYPE_CHECKING:
    from kitbuild.figures.value import FigureValue


@dataclass
class BuildReport:
    """What a build did (or, with ``dry_run``, would do)."""

    config: Config
    out: Path
    dry_run: bool
    files: list[FileResult]
    rules: list[dict[str, Any]]
    leaks: list[LeakFinding] = field(default_factory=list)
    # Every figure, counted from the rewritten kit (none in a dry run: nothing is rewritten on disk).
    figures: dict[str, FigureValue] = field(default_factory=dict)

    @property
    def record_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def events(self) -> dict[str, list[Event]]:
        """kit path -> its firings, for files where a rule fired (dry run only)."""
        return {f.kit_path: f.events for f in self.files if f.events}


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _withheld_closure(results: list[FileResult], withholding: bool) -> set[str]:
    """Original digests of every file that will change, digest withholding included.

    A file changes if a rule rewrote it, or, when a digest-withheld rule runs, if it prints the
    original digest of a file that changes (that digest will be withheld): repeat until nothing
    more changes. Without such a rule a printed digest stays, and the leak gate reports it.
    """
    withheld = {r.source_sha256 for r in results if r.changed}
    grew = withholding
    while grew:
        grew = False
        for r in results:
            if r.source_sha256 not in withheld and r.digests & withheld:
                withheld.add(r.source_sha256)
                grew = True
    return withheld


def _merge(first: FileResult, second: FileResult, digest_rule: int | None) -> FileResult:
    """A file's result after its digest-only second pass over the staged copy."""
    counts = list(first.counts)
    if digest_rule is not None:
        counts[digest_rule] = second.counts[digest_rule]
    return FileResult(
        kit_path=first.kit_path,
        size=second.size,
        sha256=second.sha256,
        source_size=first.source_size,
        source_sha256=first.source_sha256,
        binary=first.binary,
        counts=counts,
        digests=second.digests,
        long_runs=second.long_runs,
        # Either the second pass scanned the file as it now is, or the first pass found
        # nothing and the second could only find withheld digests left in place.
        leaks=second.leaks,
        events=first.events,
    )


def _never_longer(placeholder: str | None) -> bool:
    """Whether ``placeholder`` takes no more bytes than the digest it replaces, in any format:
    JSON's escaping is the longest spelling a rewrite writes (TSV and YAML refuse, not escape)."""
    return placeholder is not None and len(orjson.dumps(placeholder)) - 2 <= DIGEST_LENGTH


def _may_print(result: FileResult, withheld: set[str]) -> bool:
    return bool(result.digests & withheld) or any(w in run for run in result.long_runs for w in withheld)


def build(
    config_path: str | os.PathLike[str] = DEFAULT_CONFIG,
    out: str | os.PathLike[str] | None = None,
    *,
    dry_run: bool = False,
    jobs: int | None = None,
    progress: Progress = SILENT,
) -> BuildReport:
    """Build the kit that ``config_path`` describes; see README.md for every guarantee.

    Raises :class:`~kitbuild.errors.ConfigError` (exit 2) for input that cannot be used,
    :class:`~kitbuild.errors.LeakError` or :class:`~kitbuild.errors.UnsafeRewriteError` (exit 1)
    when the result may not be published. Nothing is written unless everything passed.
    """
    config = load_config(config_path)
    target = Path(os.path.normpath(Path(out).absolute())) if out is not None else config.out
    if out is not None:
        check_out(config, target, "--out")
    if not dry_run:
        _check_replaceable(config, target, out is not None)
    workers = jobs or default_jobs()
    files = list_files(config)

    digest_rule = next((u.index for u in config.rules if u.rule.primitive == "digest"), None)
    matchers: list[Matcher | None] = [u.rule.matcher(u.params, config.source_map()) for u in config.rules]
    private = config.private_strings()
    allow = [a["text"] for a in config.allow]

    staging = None if dry_run else Path(tempfile.mkdtemp(prefix=f".{target.name}.kitbuild-", dir=_parent(target)))
    try:
        def jobs_for(selected: list[int]) -> list[FileJob]:
            return [
                FileJob(files[i].src, files[i].kit_path, None if staging is None else str(staging / files[i].kit_path))
                for i in selected
            ]

        plan = Plan(matchers, private, {}, allow, collect=dry_run)
        # Sizes are read only for a progress bar that shows them: 100,000 stats cost a third of a second.
        total = sum(os.path.getsize(f.src) for f in files) if progress is not SILENT else None
        progress.begin("rewriting", len(files), total)
        results = run_files(jobs_for(list(range(len(files)))), plan, workers, progress, meanwhile=lambda: _import_pages(config))
        progress.end()

        withheld = _withheld_closure(results, digest_rule is not None)
        described: dict[str, str] = {}
        if withheld:
            by_sha = {r.source_sha256: r.kit_path for r in results}
            described = {w: f"the original sha256 of {by_sha[w]}, which a rule rewrote" for w in withheld}
            again = [i for i, r in enumerate(results) if _may_print(r, withheld)]
            digest_matcher: Matcher | None = None
            if digest_rule is not None:
                digest_rule_matcher = matchers[digest_rule]
                assert digest_rule_matcher is not None
                digest_matcher = digest_rule_matcher.with_withheld(frozenset(withheld))
            if staging is None:
                # A dry run has no staged copies: run every rule again from the source, so the
                # events show each firing in order.
                second = list(matchers)
                if digest_rule is not None:
                    second[digest_rule] = digest_matcher
                plan2 = Plan(second, private, described, allow, collect=True)
                for i, result in zip(again, run_files(jobs_for(again), plan2, workers)):
                    results[i] = result
            else:
                # The staged copy already carries every other rule's rewrite: the second pass
                # only withholds digests in it (and scans it again as it is now).
                only: list[Matcher | None] = [None] * len(matchers)
                if digest_rule is not None:
                    only[digest_rule] = digest_matcher
                # The staged copies are rewritten in place when no withheld digest can grow: the
                # placeholder, as any format writes it, is no longer than a digest.
                in_place = digest_matcher is not None and _never_longer(digest_matcher.placeholder)
                # Files the gate passed in the first pass need no second scan: a placeholder
                # cannot make private text, and the first census shows no withheld digest that
                # would stay. The others are scanned again, so each finding names its line and
                # column in the file as it would be published.
                progress.begin("withholding digests", len(again), sum(results[i].size for i in again))
                def rescan(r: FileResult) -> bool:
                    # A withheld digest stays where no rule withholds it, or inside a longer run
                    # of hex digits; the census of the second pass then reports where.
                    stays = digest_rule is None and bool(r.digests & withheld)
                    return stays or bool(r.leaks) or any(w in run for run in r.long_runs for w in withheld)

                for scan in (False, True):
                    chosen = [i for i in again if rescan(results[i]) == scan]
                    if not chosen:
                        continue
                    plan2 = Plan(only, private, described, allow, scan=scan)
                    staged = [str(staging / files[i].kit_path) for i in chosen]
                    jobs2 = [
                        FileJob(path, files[i].kit_path, path if in_place else path + ".withheld", results[i].sha256, in_place)
                        for path, i in zip(staged, chosen)
                    ]
                    rewritten = run_files(jobs2, plan2, workers, progress)
                    for i, path, second_result in zip(chosen, staged, rewritten):
                        if not in_place:
                            os.replace(path + ".withheld", path)
                        results[i] = _merge(results[i], second_result, digest_rule)
                progress.end()

        rules = []
        for use in config.rules:
            firings = {r.kit_path: r.counts[use.index] for r in results}
            matcher = matchers[use.index]
            writes = matcher.writes() if matcher is not None else []
            rules.append(rule_record(use.index, config, firings, writes))
        leaks = [leak for r in results for leak in r.leaks]
        report = BuildReport(config, target, dry_run, results, rules, leaks)

        if dry_run:
            return report

        assert staging is not None
        report.figures = _figures(config, staging, private)
        generated = _write_generated(config, staging, results, rules, report.figures)
        scanner = LeakScanner(private, described, allow)
        for name, data in generated.items():
            report.leaks.extend(scanner.scan(name, data, 1))
        if report.leaks:
            found = distinct(report.leaks)
            raise LeakError(_leak_message(found), found)
        _move_into_place(staging, target)
        staging = None
        return report
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _check_replaceable(config: Config, target: Path, from_option: bool) -> None:
    """Refuse to replace anything but a new or empty folder or a kit: a build replaces ``out`` whole."""
    if not (target.is_symlink() or target.exists()):
        return
    if target.is_dir() and (not any(target.iterdir()) or (target / kit_index.PROVENANCE).is_file()):
        return
    if from_option:
        where = "--out"
    elif "out" in config.data:
        where = config.document.where(["out"]) + ": out"
    else:
        where = f"{config.label}: out (default ./kit)"
    raise ConfigError(
        f"{where}: exists and is not a kit (it has no {kit_index.PROVENANCE}); a build replaces that folder whole, "
        "so kitbuild will not. Choose a new or empty folder, or remove it yourself."
    )


def _parent(target: Path) -> Path:
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _figures(config: Config, staging: Path, private: dict[str, str]) -> dict[str, FigureValue]:
    """Every figure counted from the staged, rewritten records: the page prints what the kit backs.

    A figure that cannot be counted, or a check that does not hold, stops the build (exit 1).
    The message names figures, kit paths and pointers; should it hold a string the config calls
    private (a source path typed as a kit path), that string is replaced by what it is.
    """
    if not config.figures and not config.figures_table:
        return {}
    from kitbuild.figures import FigureCheckError, FigureError, RecordFiles, evaluate, records, render_figures_table, require_checks, views

    try:
        values = evaluate(config.figures, RecordFiles(staging), where=config.document.where)
        require_checks(values)
        # The page texts' parts ({{ f.a_only }}) can only be checked now that the figures exist.
        render_figures_table(config.figures_table, views(records(values)), where=config.document.where)
    except FigureError as exc:
        raise FigureError(exc.figure, _scrub(exc.reason, private)) from None
    except FigureCheckError as exc:
        raise FigureCheckError([_scrub(line, private) for line in exc.lines]) from None
    return values


def _scrub(text: str, private: dict[str, str]) -> str:
    for secret in sorted(private, key=len, reverse=True):
        text = text.replace(secret, f"[{private[secret]}]")
    return text


def _import_pages(config: Config) -> None:
    """Import what rendering the pages takes (kitbuild.pages, and jinja2 with it) while the
    workers read the files. At the top of this module jinja2's 25 ms came before the workers
    forked, with the other cores idle."""
    import kitbuild.pages  # noqa: F401


def _write_generated(
    config: Config, staging: Path, results: list[FileResult], rules: list[dict[str, Any]], figures: dict[str, FigureValue]
) -> dict[str, bytes]:
    """Write SHA256SUMS, the travelling template, index.json, provenance.json and the pages."""
    generated: dict[str, bytes] = {}
    records = [Entry(r.kit_path, r.size, r.sha256) for r in results]
    sums = kit_index.sums_text(records)
    generated[kit_index.SUMS] = sums
    listed = records + [Entry.from_bytes(kit_index.SUMS, sums)]
    custom: dict[str, str] = {}
    pages_from = {kit_index.README: kit_index.BUILT_IN, kit_index.INDEX_PAGE: kit_index.BUILT_IN}
    if config.readme_template is not None:
        text = config.readme_template.read_bytes()
        name = f"{kit_index.TEMPLATES_DIR}/README.md.j2"
        generated[name] = text
        listed.append(Entry.from_bytes(name, text))
        try:
            custom["README.md.j2"] = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{_template_named(config)} is not UTF-8 text (byte {exc.start}); save it as UTF-8.") from None
        pages_from["README.md"] = name
    counts: dict[str, int] = {}
    for r in results:
        top = r.kit_path.split("/", 1)[0]
        counts[top] = counts.get(top, 0) + 1
    provenance = provenance_json(config, rules, counts, pages_from, figures)
    generated[kit_index.PROVENANCE] = dump_json(provenance)
    index_data = kit_index.index_document(config.kit, listed, Entry.from_bytes(kit_index.PROVENANCE, generated[kit_index.PROVENANCE]))
    index_doc = dump_json(index_data)
    generated[kit_index.INDEX] = index_doc
    from kitbuild.pages import TemplateError, page_context, render_pages  # (imported while the files ran: see _import_pages)

    try:
        generated.update(render_pages(page_context(provenance, index_data), custom))
    except TemplateError as exc:
        if exc.template is None:  # a built-in template: the kit's data, not its config
            raise
        # The kit's own template is the researcher's input, named where kit.yaml names it.
        raise ConfigError(_scrub(f"{_template_named(config)} cannot be rendered: {exc.reason}", config.private_strings())) from None
    for name, data in generated.items():
        path = staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return generated


def _template_named(config: Config) -> str:
    """The README template as kit.yaml names it, and where: how a message about it begins."""
    named = _scrub(str(config.data["readme"]["template"]), config.private_strings())
    return f"{config.document.where(['readme', 'template'])}: readme.template: {named}"


def _leak_message(shown: list[LeakFinding]) -> str:
    lines = [str(f) for f in shown]
    return (
        f"the leak gate stopped the build: {len(shown)} finding{'s' if len(shown) != 1 else ''} of private text "
        "that no rule rewrote and no allow entry covers; nothing was written.\n"
        + "\n".join(lines)
        + "\nAdd a rule (or a map entry) that rewrites it, exclude the file, or, for a path that names no person "
        "or machine, add an 'allow' entry with its reason."
    )


def _move_into_place(staging: Path, target: Path) -> None:
    """Replace ``target`` with ``staging`` so a reader never sees half of either."""
    if target.is_symlink() or target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.rmdir(old)
        os.rename(target, old)
        try:
            os.rename(staging, target)
        except OSError:
            os.rename(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, target)
    os.chmod(target, 0o755)
