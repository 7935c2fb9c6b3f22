"""A large text file of a kit observed by several workers at once, a part each.

A file's SHA-256 is one stream, but the rest of its pass is not. A part that starts at a line
start, observed with the MAX_MATCH bytes before it as context and fed MAX_MATCH bytes past its
end, finds exactly what the pass over the whole file finds starting in it: the whole file's pass
settles each window the same way (kitbuild.observe), and nothing it counts runs across a line
end (a rule's words that could are never cut: the file is then observed whole). So verify cuts a
large text file read from a folder at line ends, observes the parts in its workers and hashes the
whole file in one more job, and adds up the observations. One file of 2 GiB (bench workload D)
no longer keeps one core busy and the other idle.
"""

from __future__ import annotations

from typing import NamedTuple

from kitbuild.fileformat import format_of, is_binary
from kitbuild.hashing import BlockHasher
from kitbuild.index import WRITTEN
from kitbuild.kitview import KitFS, MemberError
from kitbuild.leaks import LeakScanner
from kitbuild.lines import BLOCK_SIZE
from kitbuild.observe import BINARY_SNIFF, Observation, Observer, Plan
from kitbuild.streamstarts import file_compression

PART_BYTES = 64 << 20  # a file is cut only into parts at least this large
PARTS_PER_WORKER = 2  # more parts than workers: they share the work with the hash job
MARGIN = LeakScanner.MAX_MATCH


class Part(NamedTuple):
    """File ``path`` from byte ``start`` (a line start) to ``end`` (None: to its end). ``start``
    -1: the job that hashes the whole file."""

    path: str
    start: int
    end: int | None


def cut(fs: KitFS, path: str, size: int, jobs: int, plan: Plan) -> list[Part] | None:
    """The jobs that observe ``path`` (about ``size`` bytes) in parts, the hash job first; None
    when it is observed whole: a small file, one core, a reader that cannot seek (an archive, a
    URL), a JSON document (its pairs need it whole), a binary file, a PDF, or words that hold a line end."""
    if jobs < 2 or size < 2 * PART_BYTES or not fs.seekable or format_of(path) == "json" or path in WRITTEN:
        return None
    if any(counter is not None and any(b"\n" in n for n in counter.needles) for counter in plan.counters):
        return None
    count = min(jobs * PARTS_PER_WORKER, size // PART_BYTES)
    starts = [0]
    try:
        with fs.open(path) as stream:
            head = stream.read(BINARY_SNIFF)
            if is_binary(head) or file_compression(head) is not None:
                return None  # binary (a PDF too), or compressed (read through from its start): observed whole
            for k in range(1, count):
                stream.seek(k * size // count)
                probe = stream.read(BLOCK_SIZE)
                line_end = probe.find(b"\n")
                at = k * size // count + line_end + 1
                if line_end >= 0 and at > starts[-1]:
                    starts.append(at)
    except (MemberError, OSError):
        return None  # observed whole, where what keeps it from being read is a finding
    if len(starts) < 2:
        return None  # one line of 128 MiB: nowhere to cut
    return [Part(path, -1, None)] + [Part(path, s, e) for s, e in zip(starts, [*starts[1:], None])]


def observe_part(fs: KitFS, plan: Plan, part: Part) -> Observation:
    """The hash job's size and digest, or a part's observation (see :meth:`Observer.from_line`).
    Raises MemberError or OSError as the reader does."""
    with fs.open(part.path) as stream:
        if part.start < 0:
            digest, size = BlockHasher(), 0
            while block := stream.read(BLOCK_SIZE):
                digest.update(block)
                size += len(block)
            return Observation(part.path, size=size, sha256=digest.hexdigest(), heads=digest.heads)
        observer = Observer(part.path, plan)
        first = max(0, part.start - MARGIN)
        stream.seek(first)
        observer.from_line(part.start, stream.read(part.start - first))
        # Fed to MARGIN past its end, and no further: a window settled before that point is
        # settled in this part only (kitbuild.observe keeps MARGIN unsettled at a window's end).
        left = None if part.end is None else part.end + MARGIN - part.start
        while left is None or left > 0:
            block = stream.read(BLOCK_SIZE if left is None else min(BLOCK_SIZE, left))
            if not block:
                break
            observer.feed(block)
            if left is not None:
                left -= len(block)
        return observer.finish(until=part.end)


def merge(path: str, observations: list[Observation]) -> Observation:
    """One file's observation from its hash job's and its parts', in file order."""
    failed = [o.error for o in observations if o.error is not None]
    if failed:
        return Observation(path, error=failed[0])
    hashed, parts = observations[0], observations[1:]
    obs = Observation(path, size=hashed.size, sha256=hashed.sha256, heads=hashed.heads, placeholders=[0] * len(parts[0].placeholders), words=[0] * len(parts[0].words))
    for part in parts:
        for hexdigest, (count, first) in part.digests.items():
            seen = obs.digests.setdefault(hexdigest, [0, first])
            seen[0] += count
            seen[1] = min(seen[1], first)
        for (key, target, said), (count, first) in part.pairs.items():
            seen = obs.pairs.setdefault((key, target, said), [0, first])
            seen[0] += count
            seen[1] = min(seen[1], first)
        obs.hidden_digest = obs.hidden_digest or part.hidden_digest
        obs.placeholders = [a + b for a, b in zip(obs.placeholders, part.placeholders)]
        obs.words = [a + b for a, b in zip(obs.words, part.words)]
        obs.leaks.extend(part.leaks)
        obs.pairs_unread += part.pairs_unread
        obs.pairs_pending += part.pairs_pending
    return obs
