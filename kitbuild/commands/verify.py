"""``kitbuild verify KIT``: a kit checked in reverse, from its own files alone.

What a reader runs on a kit they downloaded. Each file is read once and observed
(:mod:`kitbuild.observe`), and :func:`kitbuild.checks.check` re-derives every claim the kit makes
about itself from those observations: the very checks a build passed before it wrote the kit.
Nothing from the kit is imported or run: a template that travels with it is rendered only in
jinja2's sandbox, and every path goes through :mod:`kitbuild.kitfs`, which never opens anything
outside the kit.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Mapping

from kitbuild import index as kit_index
from kitbuild.checks import check, files_to_observe, plan_for
from kitbuild.errors import ConfigError, KitbuildError
from kitbuild.findings import Finding
from kitbuild.kitdocs import KitDocs, read_docs
from kitbuild.kitfs import ArchiveLimits, KitFS, MemberError, open_kit, shown
from kitbuild.observe import Observation, Plan, observe_bytes, observe_stream
from kitbuild.parallel import default_jobs, map_files
from kitbuild.parts import Part, cut, merge, observe_part
from kitbuild.progress import SILENT, Progress
from kitbuild.verify_report import VerifyReport, file_findings

__all__ = ["VerifyReport", "default_jobs", "verify"]

# What a kit read over HTTP cannot show (docs/hosted.md): its report says so rather than pass it in silence.
UNLISTABLE = "a web server cannot be listed: only the files index.json names and the build's own files were fetched, so a file on the server that index.json does not list is not seen (KB101)"

# The longest a request may wait: past about 10^10 s a socket's clock cannot count.
MAX_TIMEOUT = 10**9

_DIGEST_ARG = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")


def parse_digest(text: str) -> str:
    """``sha256:<64 hex>`` (or the bare hex) as a kit digest; a ConfigError (exit 2) otherwise."""
    m = _DIGEST_ARG.fullmatch(text.strip())
    if m is None:
        raise ConfigError(f"--digest {text!r}: not a kit digest; give it as 'sha256:' and 64 hex digits, as build, verify and the kit's README print it.")
    return "sha256:" + m.group(1).lower()


def observe_member(state: tuple[KitFS, Plan], job: str | Part) -> Observation:
    """One kit file's observation (or a part's: kitbuild.parts), or what made it unreadable."""
    fs, plan = state
    path = job.path if isinstance(job, Part) else job
    try:
        if isinstance(job, Part):
            return observe_part(fs, plan, job)
        with fs.open(path) as stream:
            return observe_stream(path, stream, plan)
    except MemberError as exc:
        return Observation(path, error=exc.reason)
    except OSError as exc:
        return Observation(path, error=exc.strerror or str(exc))


def observe_kit(fs: KitFS, docs: KitDocs, plan: Plan, jobs: int, progress: Progress) -> dict[str, Observation]:
    """Every regular file of the kit observed once; index.json and provenance.json, read whole
    already, from the bytes in hand."""
    in_hand: dict[str, bytes] = {kit_index.INDEX: docs.index.data or b""}
    if docs.provenance.data is not None:
        in_hand[kit_index.PROVENANCE] = docs.provenance.data
    paths = files_to_observe(docs)
    rest = [p for p in paths if p not in in_hand]
    sizes = _sizes(docs, rest)
    progress.begin("verifying", len(paths), sum(sizes) + sum(len(d) for d in in_hand.values()))
    observed = {p: observe_bytes(p, data, plan) for p, data in in_hand.items() if p in paths}
    progress.advance(len(observed), sum(len(in_hand[p]) for p in observed))
    del in_hand
    docs.index.let_go()
    # A large text file is observed in parts by several workers (kitbuild.parts). No list
    # more is made for a kit with none (100,000 small files: 13 MB of them at verify's peak).
    cuts = {path: parts for path, size in zip(rest, sizes) if (parts := cut(fs, path, size, jobs, plan)) is not None}
    if not cuts:
        observed.update(zip(rest, map_files(observe_member, (fs, plan), rest, sizes, jobs, progress, sequential=fs.sequential)))
    else:
        observed.update(_observe_in_parts(fs, plan, rest, sizes, cuts, jobs, progress))
    progress.end()
    return observed


def _observe_in_parts(fs: KitFS, plan: Plan, paths: list[str], sizes: list[int], cuts: dict[str, list[Part]], jobs: int, progress: Progress) -> dict[str, Observation]:
    """Each of ``paths`` observed, those in ``cuts`` in parts. A job weighs its bytes (the hash
    job a third: SHA-256 is that much faster than the search), and the progress counts each
    file once, with its bytes."""
    work: list[str | Part] = []
    weights: list[int] = []
    shown: list[tuple[int, int]] = []
    for path, size in zip(paths, sizes):
        parts = cuts.get(path)
        if parts is None:
            work.append(path)
            weights.append(size)
            shown.append((1, size))
            continue
        lengths = [(p.end if p.end is not None else size) - p.start for p in parts[1:]]
        work += parts
        weights += [size // 3, *lengths]
        shown += [(1, 0)] + [(0, n) for n in lengths]
    done = iter(map_files(observe_member, (fs, plan), work, weights, jobs, progress, sequential=fs.sequential, shown=shown))
    return {path: merge(path, [next(done) for _ in cuts[path]]) if path in cuts else next(done) for path in paths}


def _sizes(docs: KitDocs, paths: list[str]) -> list[int]:
    """Each file's size as listed, else as index.json records it: a hint to share the work."""
    listed: Mapping[str, Any] = {e["path"]: e["size"] for e in docs.entries}
    out = []
    for p in paths:
        member = docs.members.get(p)
        size = member.size if member is not None and member.size is not None else listed.get(p, 0)
        out.append(max(0, int(size)))
    return out


def verify(
    kit: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    progress: Progress = SILENT,
    limits: ArchiveLimits = ArchiveLimits(),
    digest: str | None = None,
    timeout: float | None = None,
) -> VerifyReport:
    """Check the kit at ``kit`` (a folder, a .tar.gz/.zip archive, or the http(s) URL of either)
    in reverse and report every finding.

    Raises :class:`~kitbuild.kitfs.NotAKitError` (exit 2) when ``kit`` is not a kit at all.
    Anything else wrong, an archive's hostile members included, is a finding in the report.
    ``digest``: the kit digest the reader was given (a paper, a release page); a kit whose own
    digest differs is a finding (KB009). ``timeout``: seconds each request of a kit read over
    HTTP may wait (default :data:`kitbuild.httpkit.DEFAULT_TIMEOUT`).
    """
    expected = parse_digest(digest) if digest is not None else None
    if timeout is not None and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
        # (A socket refuses past its clock's range, an OverflowError deep in a request.)
        raise KitbuildError(f"--timeout: {timeout:g} is not a number of seconds a request can wait; give one from 0.1 to {MAX_TIMEOUT:,}.")
    fs = open_kit(kit, limits, timeout)
    try:
        docs = read_docs(fs)
        plan = plan_for(docs)
        observed = observe_kit(fs, docs, plan, fs.workers(jobs or default_jobs()), progress)
        report = check(fs, docs, observed, shown(str(kit)))
    finally:
        fs.close()
    if not fs.listable:
        report.check("completeness").figures.append(UNLISTABLE)
    if expected is not None and report.digest != expected:
        finding = Finding("KB009", kit_index.INDEX, f"the kit's digest is {report.digest}; the one given is {expected}", expected=expected, found=report.digest)
        file_findings({c.id: c for c in report.checks}, [finding])
    return report
