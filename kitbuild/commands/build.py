"""``kitbuild build``: private bench records in, a publishable data kit out.

The stages: load the config; list the files; copy each one into a staging folder, rewritten by
the rules, observing the bytes as they are written (:mod:`kitbuild.observe`, the pass verify
makes); withhold the digests of changed files until nothing more changes; write SHA256SUMS,
index.json, provenance.json and the pages; then run :func:`kitbuild.checks.check`, verify's own
checks, on the staged kit, with the config's private strings added to the leak scan. Only a kit
with no finding is moved into place: so a kit a build writes is a kit that verifies clean.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence, cast

import orjson

from kitbuild import index as kit_index
from kitbuild.checks import check
from kitbuild.config import DEFAULT_CONFIG, Config, check_out, load_config
from kitbuild.errors import ConfigError, LeakError
from kitbuild.findings import Finding
from kitbuild.gate import gate_findings, gate_message, name_findings, names_message, scrub
from kitbuild.hashing import BlockHasher
from kitbuild.jsonfile import dump_json, dump_json_pieces
from kitbuild.kitdocs import placeholders_of, read_docs, word_forms
from kitbuild.kitfs import FolderKit
from kitbuild.matchers import Matcher, path_spellings
from kitbuild.metadata import METADATA_FILES
from kitbuild.lines import BLOCK_SIZE, line_chunks
from kitbuild.fileformat import is_binary
from kitbuild.observe import BINARY_SNIFF, Observation, Observer, Plan, observe_bytes
from kitbuild.parallel import default_jobs, map_files
from kitbuild.private import private_strings, safe
from kitbuild.progress import SILENT, Progress
from kitbuild.provenance import provenance_json, rule_record
from kitbuild.rewrite import Event, Rewriter
from kitbuild.sources import SourceFile, list_files, open_source, source_size
from kitbuild.staging import Staging, make_folders

if TYPE_CHECKING:
    from kitbuild.figures.value import FigureValue

__all__ = ["BuildReport", "FileResult", "build", "default_jobs"]


@dataclass(slots=True)
class FileResult:
    """What writing one file did: its rule firings, and the observation of the bytes written.
    (Tuples and slots: a build holds one for each file of the kit, sent back from a worker.)"""

    kit_path: str
    source_sha256: str
    counts: tuple[int, ...]
    events: tuple[Event, ...]
    observation: Observation
    keys_seen: tuple[int, ...] = ()  # which of Work.map_keys the source holds

    @property
    def size(self) -> int:
        return self.observation.size

    @property
    def sha256(self) -> str:
        return self.observation.sha256

    @property
    def changed(self) -> bool:
        return self.sha256 != self.source_sha256


@dataclass
class BuildReport:
    """What a build did (or, with ``dry_run``, would do)."""

    config: Config
    out: Path
    dry_run: bool
    files: list[FileResult]
    rules: list[dict[str, Any]]
    # What the checks found (a build with any is refused; a dry run reports them).
    findings: list[Finding] = field(default_factory=list)
    figures: dict[str, FigureValue] = field(default_factory=dict)
    # What is almost always a typo, reported without stopping the build (KB905, KB906).
    warnings: list[Finding] = field(default_factory=list)
    digest: str | None = None  # the kit's one digest (see kitbuild.kitdocs.kit_digest)

    @property
    def record_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def events(self) -> dict[str, list[Event]]:
        """kit path -> its firings, for files where a rule fired (dry run only)."""
        return {f.kit_path: list(f.events) for f in self.files if f.events}


@dataclass(frozen=True)
class Work:
    """What every file's pass needs; sent once to each worker."""

    matchers: list[Matcher | None]
    plan: Plan
    collect: bool
    # The map entries' paths, each looked for in the sources as they are read (see _unused).
    map_keys: tuple[tuple[bytes, ...], ...] = ()  # each map key in the spellings the rule reads


def write_file(work: Work, job: tuple[str, str, str]) -> FileResult:
    """Copy ``src`` to ``dst``, rewritten by the rules, observing what is written."""
    src, kit_path, dst = job
    observer = Observer(kit_path, work.plan)
    rewriter = Rewriter(kit_path, work.matchers, work.collect)
    with open_source(src, kit_path) as source, open(dst, "wb") as sink:
        head = source.read(BINARY_SNIFF)
        binary = is_binary(head)
        chunks: Iterator[bytes] = _blocks(source, head) if binary else line_chunks(source, head)
        # A binary file is copied as it is: the observer's digest is the source's (hashed once).
        source_hash = None if binary else BlockHasher()
        seen: set[int] = set()
        for chunk in chunks:
            if source_hash is not None:
                source_hash.update(chunk)
            seen.update(k for k, forms in enumerate(work.map_keys) if k not in seen and any(form in chunk for form in forms))
            out = chunk if binary else rewriter.feed(chunk)
            sink.write(out)
            observer.feed(out)
    counts = (0,) * len(work.matchers) if binary else tuple(rewriter.counts)
    observation = observer.finish()
    original = observation.sha256 if source_hash is None else source_hash.hexdigest()
    if observation.sha256 == original:
        observation.sha256 = original  # one string for an unchanged file's two digests, sent once
    return FileResult(kit_path, original, counts, () if binary else tuple(rewriter.events or ()), observation, tuple(sorted(seen)))


def _blocks(stream: Any, head: bytes) -> Iterator[bytes]:
    if head:
        yield head
    while block := stream.read(BLOCK_SIZE):
        yield block


def withhold_file(work: Work, job: tuple[str, str, str]) -> FileResult:
    """Rewrite a staged copy once more with only the digest rule, observing it again."""
    staged, kit_path, digest_rule = job
    result = write_file(work, (staged, kit_path, staged + ".withheld"))
    os.replace(staged + ".withheld", staged)
    return result


def observe_file(work: Work, job: tuple[str, str]) -> Observation:
    path, kit_path = job
    observer = Observer(kit_path, work.plan)
    with open(path, "rb") as stream:
        while block := stream.read(BLOCK_SIZE):
            observer.feed(block)
    return observer.finish()


def _withheld_closure(results: list[FileResult], withholding: bool) -> set[str]:
    """Original digests of every file that will change, digest withholding included: a file
    changes if a rule rewrote it, or, with digest-withheld, if it prints the original digest of
    a file that changes (that digest will be withheld). Repeat until nothing more changes."""
    withheld = {r.source_sha256 for r in results if r.changed}
    grew = withholding
    while grew:
        grew = False
        for r in results:
            if r.source_sha256 not in withheld and r.observation.digests.keys() & withheld:
                withheld.add(r.source_sha256)
                grew = True
    return withheld


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
    :class:`~kitbuild.errors.LeakError` (exit 1) when the staged kit has a finding, naming each.
    Nothing is written unless everything passed; a dry run writes nothing and reports findings.
    """
    config = load_config(config_path)
    target = Path(os.path.normpath(Path(out).absolute())) if out is not None else config.out
    if target.is_symlink():
        target = Path(os.path.realpath(target))  # the kit is written where the link leads, and the link kept
    check_out(config, target, "--out" if out is not None else f"{config.document.where(['out'])}: out" if "out" in config.data else "out")
    if not dry_run:
        _check_replaceable(config, target, out is not None)
    workers = jobs or default_jobs()
    files = list_files(config)
    matchers: list[Matcher | None] = [u.rule.matcher(u.params, config.source_map()) for u in config.rules]
    skeleton = [rule_record(u.index, config, {}, m.writes() if m is not None else []) for u, m in zip(config.rules, matchers)]
    plan = Plan(
        paths=frozenset([f.kit_path for f in files] + list(kit_index.UNLISTED) + [kit_index.SUMS, *METADATA_FILES] + ([f"{kit_index.TEMPLATES_DIR}/README.md.j2"] if config.readme_template else [])),
        placeholders=placeholders_of(skeleton),
        words=tuple(forms for r in skeleton if (forms := word_forms(r)) is not None),
        allow=tuple(a["text"] for a in config.allow),
        private=private_strings(config),
        pairs=False,  # read once the copies are final (see _withhold)
    )
    map_keys = _map_keys(config)
    named = name_findings([f.kit_path for f in files], plan.scanner, plan.private)
    if named:
        raise LeakError(names_message(named), named)
    with Staging(target, dry_run) as staging:
        work = Work(matchers, plan, dry_run, tuple(tuple(form.encode("utf-8") for form in path_spellings(key)) for key, _ in map_keys))
        results = _write_all(files, work, staging.path, workers, progress)
        del files  # (what is left of each file is its result: a kit of 100,000 files holds 100,000)
        results = _withhold(config, matchers, work, results, staging.path, workers, progress)
        rules = [rule_record(u.index, config, {r.kit_path: r.counts[u.index] for r in results if r.counts[u.index]}, skeleton[u.index]["writes"]) for u in config.rules]
        figures = _figures(config, staging.path, plan.private)
        observed = {r.kit_path: r.observation for r in results}
        observed.update(_write_generated(config, staging.path, results, rules, figures, replace(plan, withheld=_described(results, private=plan.private))))
        with FolderKit(staging.path) as fs:
            report = check(fs, read_docs(fs, observed=observed), observed, str(target))
        findings = gate_findings(report.findings, plan.private)
        result = BuildReport(config, target, dry_run, results, rules, findings, figures, warnings=_unused(config, rules, map_keys, results) + _rai_unset(config), digest=report.digest)
        if dry_run:
            return result
        if findings:
            raise LeakError(gate_message(findings, {r.kit_path for r in results if r.observation.binary}), findings)
        staging.swap()
        return result


def _write_all(files: list[SourceFile], work: Work, staging: Path, workers: int, progress: Progress) -> list[FileResult]:
    """Each source file copied into the staged kit through the rules, observed as it is written."""
    sizes = [source_size(f) for f in files]
    progress.begin("rewriting", len(files), sum(sizes))
    for folder in sorted({os.path.dirname(f.kit_path) for f in files}):
        make_folders(staging / folder)
    results = map_files(write_file, work, cast("Sequence[tuple[str, str, str]]", _Jobs(files, str(staging))), sizes, workers, progress)
    progress.end()
    return results


class _Jobs:
    """(source, kit path, staged copy) of each file, made as its batch is sent: not 100,000 paths
    of staged copies held at once."""

    def __init__(self, files: list[SourceFile], staging: str) -> None:
        self.files, self.staging = files, staging

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[str, str, str]:
        f = self.files[i]
        return f.src, f.kit_path, os.path.join(self.staging, f.kit_path)

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        return (self[i] for i in range(len(self)))


def _map_keys(config: Config) -> list[tuple[str, str]]:
    """(path, where it is in kit.yaml) for each map entry of every path rule."""
    out = []
    for use in config.rules:
        if use.rule.primitive == "path_prefix":
            for n, key in enumerate(use.params.get("map", {})):
                out.append((str(key), f"rules[{use.index}].with.map (entry {n + 1})"))
    return out


def _unused(config: Config, rules: list[dict[str, Any]], map_keys: list[tuple[str, str]], results: list[FileResult]) -> list[Finding]:
    """A map entry no source file holds, and a rule that never fired: almost always a typo."""
    warnings = []
    seen = set().union(*(r.keys_seen for r in results)) if results else set()
    for k, (_, where) in enumerate(map_keys):
        if k not in seen:
            # The path itself is private: only its place in kit.yaml is named.
            warnings.append(Finding("KB905", config.label, f"{where}: its path occurs in no file of the sources, so it rewrites nothing; check it for a typo, or remove it"))
    for use, rule in zip(config.rules, rules):
        if rule["total"] == 0 and rule["primitive"] != "digest":
            warnings.append(Finding("KB906", config.label, f"rules[{use.index}] ({rule['name']}) never fired in any file; check its parameters for a typo, or remove it"))
    return warnings


def _rai_unset(config: Config) -> list[Finding]:
    """The Responsible-AI fields croissant.json still lacks, named in one warning (KB907)."""
    from kitbuild.croissant import missing_rai

    # Only for a kit.yaml with a rai: section: a kit not meant for the track is not nagged.
    empty = missing_rai(config.data) if "rai" in config.data else []
    if not empty:
        return []
    return [Finding("KB907", config.label, f"rai: croissant.json has no {', '.join(empty)}; the NeurIPS Evaluations & Datasets track asks for each (docs/croissant.md)")]


def _withhold(config: Config, matchers: list[Matcher | None], work: Work, results: list[FileResult], staging: Path, workers: int, progress: Progress) -> list[FileResult]:
    """Withhold the digests of changed files, then observe again every file that could print
    one, and every other whose records state (path, digest) pairs: the first pass left them."""
    digest_rule = next((u.index for u in config.rules if u.rule.primitive == "digest"), None)
    withheld = _withheld_closure(results, digest_rule is not None)
    plan = replace(work.plan, withheld=_described(results, withheld, work.plan.private) if withheld else {}, pairs=True)
    again = [i for i, r in enumerate(results) if withheld and (r.observation.digests.keys() & withheld or r.observation.hidden_digest or r.observation.binary)]
    rewrite = again if digest_rule is not None else []
    observe = sorted(set(again) - set(rewrite) | {i for i, r in enumerate(results) if r.observation.pairs_pending and i not in rewrite})
    if rewrite:
        progress.begin("withholding digests", len(rewrite), sum(results[i].size for i in rewrite))
        assert digest_rule is not None
        only: list[Matcher | None] = [None] * len(matchers)
        digest_matcher = matchers[digest_rule]
        assert digest_matcher is not None
        only[digest_rule] = digest_matcher.with_withheld(frozenset(withheld))
        second = map_files(withhold_file, Work(only, plan, work.collect), [(str(staging / results[i].kit_path), results[i].kit_path, "") for i in rewrite], [results[i].size for i in rewrite], workers, progress)
        for i, res in zip(rewrite, second):
            first = results[i]
            counts = list(first.counts)
            counts[digest_rule] = res.counts[digest_rule]
            results[i] = FileResult(first.kit_path, first.source_sha256, tuple(counts), first.events + res.events, res.observation, first.keys_seen)
        progress.end()
    if observe:
        # Observed again as they are: so the gate names each digest left in place, and their pairs are read.
        progress.begin("reading digests", len(observe), sum(results[i].size for i in observe))
        observations = map_files(observe_file, Work([], plan, False), [(str(staging / results[i].kit_path), results[i].kit_path) for i in observe], [results[i].size for i in observe], workers, progress)
        for i, obs in zip(observe, observations):
            results[i] = replace(results[i], observation=obs)
        progress.end()
    return results


def _described(results: list[FileResult], withheld: set[str] | None = None, private: Mapping[str, str] = {}) -> dict[str, str]:
    """Each original digest that may not be published, with what it is (its kit path, unless
    that names something private)."""
    if withheld is None:
        withheld = {r.source_sha256 for r in results if r.changed}
    return {r.source_sha256: safe(f"the original sha256 of {r.kit_path}, which a rule rewrote", private) for r in results if r.source_sha256 in withheld}


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


def _figures(config: Config, staging: Path, private: dict[str, str] | Any) -> dict[str, FigureValue]:
    """Every figure counted from the staged, rewritten records: the page prints what the kit backs.

    A figure that cannot be counted, or a check that does not hold, stops the build (exit 1). A
    string the config calls private in the message is replaced by what it is.
    """
    if not config.figures and not config.figures_table:
        return {}
    from kitbuild.figures import FigureCheckError, FigureError, RecordFiles, evaluate, records, render_figures_table, require_checks, views
    from kitbuild.figures.table import render_prose

    try:
        values = evaluate(config.figures, RecordFiles(staging), where=config.document.where)
        require_checks(values)
        render_figures_table(config.figures_table, views(records(values)), where=config.document.where)
        render_prose(config.data, views(records(values)), where=config.document.where)
    except FigureError as exc:
        raise FigureError(exc.figure, scrub(exc.reason, private)) from None
    except FigureCheckError as exc:
        raise FigureCheckError([scrub(line, private) for line in exc.lines]) from None
    return values


def _write_generated(config: Config, staging: Path, results: list[FileResult], rules: list[dict[str, Any]], figures: dict[str, FigureValue], plan: Plan) -> dict[str, Observation]:
    """Write SHA256SUMS, the travelling template, index.json, provenance.json and the pages;
    return the observation of each with ``plan`` (the bytes are let go: croissant.json and
    index.json alone are 50 MB for a kit of 100,000 files).

    The pages are rendered from provenance.json as parsed back from its bytes and from the
    document index.json was written from: what verify parses back from them (the staged kit's
    check renders them again so, and stops the build if they differ).
    """
    entry = kit_index.entry
    generated: dict[str, bytes] = {}
    listed = [{"path": r.kit_path, "size": r.size, "sha256": r.sha256} for r in results]
    observed: dict[str, Observation] = {}
    sums = kit_index.sums_pieces((r.kit_path, r.sha256) for r in sorted(results, key=lambda r: r.kit_path))
    listed.append(_write_observed(staging, kit_index.SUMS, sums, plan, observed))
    custom: dict[str, str] = {}
    pages_from = {kit_index.README: kit_index.BUILT_IN, kit_index.INDEX_PAGE: kit_index.BUILT_IN}
    if config.readme_template is not None:
        text = config.readme_template.read_bytes()
        name = f"{kit_index.TEMPLATES_DIR}/README.md.j2"
        try:
            custom["README.md.j2"] = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{_template_named(config)} is not UTF-8 text (byte {exc.start}); save it as UTF-8.") from None
        generated[name] = text
        listed.append(entry(name, text))
        pages_from[kit_index.README] = name
    counts: dict[str, int] = {}
    for r in results:
        top = r.kit_path.split("/", 1)[0]
        counts[top] = counts.get(top, 0) + 1
    generated[kit_index.PROVENANCE] = dump_json(provenance_json(config, rules, counts, pages_from, figures))
    provenance_entry = entry(kit_index.PROVENANCE, generated[kit_index.PROVENANCE])
    listed += _write_metadata(staging, generated, listed, provenance_entry, plan, observed)
    # index.json is written and observed a block at a time, and the pages rendered from the
    # document it was written from: its bytes are never held whole (16 MB for 100,000 files).
    index = kit_index.index_document(config.kit, listed, provenance_entry)
    del listed
    digest = "sha256:" + _write_observed(staging, kit_index.INDEX, dump_json_pieces(index, "files"), plan, observed)["sha256"]
    from kitbuild.pages import TemplateError, page_context, render_pages

    try:
        generated.update(render_pages(page_context(orjson.loads(generated[kit_index.PROVENANCE]), index, digest), custom))
    except TemplateError as exc:
        if exc.template is None:  # a built-in template: the kit's data, not its config
            raise
        # The kit's own template is the researcher's input, named where kit.yaml names it.
        raise ConfigError(scrub(_template_failure(config, exc.reason, exc.line), private_strings(config))) from None
    for name, data in generated.items():
        path = staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        observed[name] = observe_bytes(name, data, plan)
    return observed


def _template_failure(config: Config, reason: str, line: int | None) -> str:
    """Why the README template cannot be rendered: at ``file:line`` when a line of it is at fault."""
    if line is None:
        return f"{_template_named(config)} cannot be rendered: {reason}"
    # The template's path as the command line reaches it: kit.yaml names it relative to itself.
    shown = os.path.normpath(os.path.join(os.path.dirname(config.label), str(config.data["readme"]["template"])))
    return f"{shown}:{line}: {reason} (the README template, named at {config.document.where(['readme', 'template'])}: readme.template)"


def _write_metadata(staging: Path, generated: dict[str, bytes], listed: list[dict[str, Any]], provenance_entry: dict[str, Any], plan: Plan, observed: dict[str, Observation]) -> list[dict[str, Any]]:
    """CITATION.cff (when kit.yaml names authors) and croissant.json, written from provenance.json
    as parsed back and from the staged files, as verify writes them again; their index entries.
    croissant.json is written and observed a block at a time, never held whole (33 MB, and as
    much again to join it, for a kit of 100,000 files)."""
    from kitbuild.metadata import CITATION, CROISSANT, croissant_pieces, write_citation

    provenance = orjson.loads(generated[kit_index.PROVENANCE])
    added = []
    cff = write_citation(provenance)
    if cff is not None:
        generated[CITATION] = cff
        added.append(kit_index.entry(CITATION, cff))
    with FolderKit(staging) as fs:
        # (A staged file changed since it was written is the staged kit's checks' to report.)
        added.append(_write_observed(staging, CROISSANT, croissant_pieces(provenance, listed + added, provenance_entry, fs, observed, []), plan, observed))
    return added


def _write_observed(staging: Path, name: str, pieces: Iterable[bytes], plan: Plan, observed: dict[str, Observation]) -> dict[str, Any]:
    """A file the build writes about the kit, written from ``pieces`` and observed a block at a
    time (never whole: croissant.json and SHA256SUMS of 100,000 files are 43 MB); its entry."""
    observer = Observer(name, plan)
    with open(staging / name, "wb") as sink:
        block: list[bytes] = []
        size = 0
        for piece in itertools.chain(pieces, [b""]):
            block.append(piece)
            size += len(piece)
            if size >= BLOCK_SIZE or not piece:
                data = b"".join(block)
                sink.write(data)
                observer.feed(data)
                block, size = [], 0
    observed[name] = observation = observer.finish()
    return {"path": name, "size": observation.size, "sha256": observation.sha256}


def _template_named(config: Config) -> str:
    """The README template as kit.yaml names it, and where: how a message about it begins."""
    named = scrub(str(config.data["readme"]["template"]), private_strings(config))
    return f"{config.document.where(['readme', 'template'])}: readme.template: {named}"

