"""Which search a literal rule should rewrite with, measured on records (docs/performance.md,
"Rewriting: which matcher").

    python bench/literal_search.py [--mb 200] [--share 0.01] [--budget 20] [--cpu 0]

Generates NDJSON records (one 1 MiB chunk of whole lines at a time, as a build reads them) in
which 1 % of the lines print a machine name the rule knows and 0.1 % a near miss (the name with a
digit after it, which must stay; ``--share`` sets the first, the second is a tenth of it), and
rewrites them with box-name-to-role given 1, 3, 30 and 1,000 names, each way:

- ``re``: one alternation, longest name first, with the rule's boundary lookarounds (the
  lookbehind first, as the rule reads; or after each name, so that the pattern starts with the
  names and ``re`` can skip to their first bytes);
- ``ahocorasick_rs``: every occurrence (overlapping ones too), boundaries tested per occurrence
  (what kitbuild.matchers does); or leftmost-longest occurrences, each tested, the overlapping
  search only for a chunk where one fails its boundary;
- a chain of ``bytes.replace``, longest name first: no boundary at all, so it rewrites the near
  misses too; the floor of what a replacement costs in Python;
- kitbuild's Rewriter as shipped, on a .txt file and with ``fields: [route]`` on a .ndjson file;
- ``sed -E -i`` with one ``s#name#role#g`` per name, longest first (as bench/run.py runs it).

Each is timed in processor seconds of one process pinned to one core (so that other work on the
machine does not count), the best of three rounds that take the approaches in turn; a search too
slow to pass over all of it within ``--budget`` processor seconds is timed once, on the chunks it
did in that time. Each output is compared with the Rewriter's, chunk by chunk. Also how fast printed digests are found,
two ways. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

import ahocorasick_rs

from kitbuild.digests import hex_runs
from kitbuild.matchers import NAME_BEFORE, NAME_END
from kitbuild.rewrite import Rewriter
from kitbuild.rules import builtin_rule

MiB = 1 << 20
Rewrite = Callable[[bytes], tuple[bytes, int]]


def rule_names(count: int) -> dict[str, str]:
    """The bench's two names of one machine and node names after them, as bench/workloads.py."""
    if count == 1:
        return {"gpu-b17": "desktop"}
    names = {"gpu-b17.cluster.example.net": "desktop", "gpu-b17": "desktop"}
    names.update({f"node-{i:04d}.cluster.example.net": f"node{i % 7}" for i in range(count - 2)})
    return names


def records(names: list[str], total: int, seed: int, share: float) -> list[bytes]:
    """About ``total`` bytes of records in chunks of whole lines of at most 1 MiB; ``share`` of
    the lines print a name, a tenth as many a near miss."""
    rng = random.Random(seed)
    chunks: list[bytes] = []
    lines: list[bytes] = []
    size = j = 0
    while size < total:
        draw = rng.random()
        route = rng.choice(names) if draw < share else rng.choice(names) + "0" if draw < share * 1.1 else "desktop"
        line = (
            f'{{"qid":"q{j:08d}","path":"records/run-{j % 97:04d}/rows-{j % 500:03d}.ndjson","route":"{route}",'
            f'"reads":{{"path":"records/run-0001/rows-0001.ndjson","sha256":"{rng.getrandbits(256):064x}"}},'
            f'"search":[{",".join(f"{chr(34)}s{rng.getrandbits(40):010x}.md{chr(34)}" for _ in range(10))}],'
            f'"score":{{"any@5":{rng.getrandbits(1)},"all@5":{rng.getrandbits(1)}}}}}\n'
        ).encode()
        if sum(map(len, lines)) + len(line) > MiB:
            chunks.append(b"".join(lines))
            lines = []
        lines.append(line)
        size += len(line)
        j += 1
    chunks.append(b"".join(lines))
    return chunks


def _joined(chunk: bytes, hits: list[tuple[int, int, bytes]]) -> tuple[bytes, int]:
    out, last = [], 0
    for start, end, rep in hits:
        out += [chunk[last:start], rep]
        last = end
    out.append(chunk[last:])
    return b"".join(out), len(hits)


_BEFORE, _END = re.compile(NAME_BEFORE), re.compile(NAME_END)


def _holds(data: bytes, start: int, end: int) -> bool:
    return not (start and _BEFORE.match(data, start - 1)) and _END.match(data, end) is not None


def by_regex(pairs: dict[bytes, bytes], lookbehind_after: bool) -> Rewrite:
    keys = sorted(pairs, key=lambda k: (-len(k), k))
    if lookbehind_after:
        alternation = b"|".join(re.escape(k) + b"(?<!" + NAME_BEFORE + b"." * len(k) + b")" for k in keys)
        pattern = re.compile(b"(?:" + alternation + b")" + NAME_END, re.DOTALL)
    else:
        pattern = re.compile(b"(?<!" + NAME_BEFORE + b")(?:" + b"|".join(map(re.escape, keys)) + b")" + NAME_END)
    return lambda chunk: _joined(chunk, [(m.start(), m.end(), pairs[m.group()]) for m in pattern.finditer(chunk)])


def _every_occurrence(automaton: ahocorasick_rs.BytesAhoCorasick, reps: list[bytes], chunk: bytes) -> list[tuple[int, int, bytes]]:
    found = sorted(automaton.find_matches_as_indexes(chunk, overlapping=True), key=lambda m: (m[1], -m[2]))
    hits, taken = [], 0
    for i, start, end in found:
        if start >= taken and _holds(chunk, start, end):
            hits.append((start, end, reps[i]))
            taken = end
    return hits


def by_automaton(pairs: dict[bytes, bytes]) -> Rewrite:
    keys = list(pairs)
    automaton = ahocorasick_rs.BytesAhoCorasick(keys)
    reps = [pairs[k] for k in keys]
    return lambda chunk: _joined(chunk, _every_occurrence(automaton, reps, chunk))


def by_leftmost_longest(pairs: dict[bytes, bytes]) -> Rewrite:
    keys = list(pairs)
    longest = ahocorasick_rs.BytesAhoCorasick(keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
    every = ahocorasick_rs.BytesAhoCorasick(keys)
    reps = [pairs[k] for k in keys]

    def rewrite(chunk: bytes) -> tuple[bytes, int]:
        hits = []
        for i, start, end in longest.find_matches_as_indexes(chunk):
            if not _holds(chunk, start, end):
                return _joined(chunk, _every_occurrence(every, reps, chunk))
            hits.append((start, end, reps[i]))
        return _joined(chunk, hits)

    return rewrite


def by_replace_chain(pairs: dict[bytes, bytes]) -> Rewrite:
    keys = sorted(pairs, key=lambda k: (-len(k), k))

    def rewrite(chunk: bytes) -> tuple[bytes, int]:
        fired = 0
        for key in keys:
            fired += chunk.count(key)
            chunk = chunk.replace(key, pairs[key])
        return chunk, fired

    return rewrite


def by_rewriter(names: dict[str, str], kit_path: str, fields: list[str] | None) -> Rewrite:
    matcher = builtin_rule("box-name-to-role").matcher({"names": names, **({"fields": fields} if fields else {})})

    def rewrite(chunk: bytes) -> tuple[bytes, int]:
        rewriter = Rewriter(kit_path, [matcher])  # one file per chunk: no state carried between them
        return rewriter.feed(chunk), rewriter.counts[0]

    return rewrite


def one_pass(rewrite: Rewrite, chunks: list[bytes], budget: float, digests: list[str] | None) -> tuple[float, int]:
    """MB/s (processor time) of one pass, stopped after ``budget`` seconds, and the bytes done;
    each chunk's output digest added to ``digests`` when it is a list (outside the timing)."""
    spent = 0.0
    done = 0
    for chunk in chunks:
        start = time.process_time()
        out, _ = rewrite(chunk)
        spent += time.process_time() - start
        if digests is not None:
            digests.append(hashlib.sha256(out).hexdigest())
        done += len(chunk)
        if spent > budget:
            break
    return done / spent / 1e6, done


def timed(cases: list[tuple[str, Rewrite]], chunks: list[bytes], budget: float) -> dict[str, tuple[float, int, list[str]]]:
    """For each case: its best MB/s over three rounds, the bytes it was timed on, and the digest
    of each chunk's output. The rounds take the cases in turn, so that a change in what else
    the machine runs falls on all of them alike; a case too slow for one whole pass within
    ``budget`` is timed once, on the chunks it did."""
    results: dict[str, tuple[float, int, list[str]]] = {}
    total = sum(map(len, chunks))
    for round_no in range(3):
        for label, rewrite in cases:
            if round_no and results[label][1] < total:
                continue
            digests: list[str] | None = [] if not round_no else None
            rate, done = one_pass(rewrite, chunks, budget, digests)
            if digests is not None:
                results[label] = (rate, done, digests)
            else:
                best, done, kept = results[label]
                results[label] = (max(best, rate), done, kept)
    return results


def sed_rate(names: dict[str, str], data: Path, work: Path, budget: float, cpu: int) -> tuple[float, int, str]:
    """MB/s of ``sed -E -i`` (processor time of the child), on the whole file when a first
    timing on 8 MiB says it fits in ``budget``, else on that 8 MiB; the bytes it ran on; and
    the sha256 of what it wrote."""
    exprs: list[str] = []
    for name in sorted(names, key=lambda k: (-len(k), k)):
        escaped = name.replace(".", "\\.")  # as bench/run.py escapes names
        exprs += ["-e", f"s#{escaped}#{names[name]}#g"]

    def run(size: int | None) -> tuple[float, int, str]:
        copy = work / "sed.ndjson"
        with open(data, "rb") as src, open(copy, "wb") as dst:
            if size is None:
                shutil.copyfileobj(src, dst)
            else:
                dst.write(src.read(size))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["sed", "-E", "-i", *exprs, str(copy)], check=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        n = size if size is not None else data.stat().st_size
        digest = hashlib.sha256()
        with open(copy, "rb") as written:
            while block := written.read(MiB):
                digest.update(block)
        return n / max(spent, 1e-6) / 1e6, n, digest.hexdigest()

    rate, n, digest = run(8 * MiB)
    if data.stat().st_size / 1e6 / rate <= budget:
        rate, n, digest = run(None)
    return rate, n, digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="megabytes of records per case (default 200)")
    parser.add_argument("--budget", type=float, default=20.0, help="processor seconds a pass may take (default 20)")
    parser.add_argument("--share", type=float, default=0.01, help="the share of lines that print a name (default 0.01)")
    parser.add_argument("--cpu", type=int, default=0, help="the core to run on (default 0)")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), "?")
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {model}; Python {platform.python_version()}; "
          f"one core, processor time; {args.mb} MB per case, {args.share:.0%} of lines print a name\n")
    rows: dict[str, dict[int, str]] = {}
    digests_rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for count in (1, 3, 30, 1000):
            names = rule_names(count)
            pairs = {k.encode(): v.encode() for k, v in names.items()}
            chunks = records(list(names), args.mb * 1_000_000, count, args.share)
            data = work / "records.ndjson"
            with open(data, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
            total = sum(map(len, chunks))
            cases: list[tuple[str, Rewrite]] = [
                ("Rewriter as shipped (ahocorasick_rs, every occurrence), .txt", by_rewriter(names, "records.txt", None)),
                ("Rewriter as shipped, `fields: [route]`, .ndjson", by_rewriter(names, "records.ndjson", ["route"])),
                ("ahocorasick_rs, every occurrence, boundaries per occurrence", by_automaton(pairs)),
                ("ahocorasick_rs, leftmost-longest, boundaries per hit (+ fallback)", by_leftmost_longest(pairs)),
                ("re, one alternation, lookbehind first", by_regex(pairs, lookbehind_after=False)),
                ("re, one alternation, lookbehind after each name", by_regex(pairs, lookbehind_after=True)),
                ("chain of bytes.replace, longest first (no boundaries)", by_replace_chain(pairs)),
            ]
            results = timed(cases, chunks, args.budget)
            reference = results[cases[0][0]][2]
            for label, (rate, n, outputs) in results.items():
                same = "same" if outputs == reference[: len(outputs)] else "differs"
                part = "" if n == total else f", on {n / 1e6:.0f} MB"
                rows.setdefault(label, {})[count] = f"{rate:,.0f} ({same}{part})"
                print(f"{count} names, {label}: {rate:,.1f} MB/s, {same}{part}", flush=True)
            rate, n, sed_digest = sed_rate(names, data, work, args.budget, args.cpu)
            shipped = by_rewriter(names, "records.txt", None)
            ours = hashlib.sha256()
            if n == total:
                for chunk in chunks:
                    ours.update(shipped(chunk)[0])
            else:
                with open(data, "rb") as src:
                    ours.update(shipped(src.read(n))[0])
            same = "same" if ours.hexdigest() == sed_digest else "differs"
            part = "" if n == total else f", on {n / 1e6:.0f} MB"
            rows.setdefault("`sed -E -i`, one `s#name#role#g` per name, longest first", {})[count] = f"{rate:,.0f} ({same}{part})"
            print(f"{count} names, sed: {rate:,.1f} MB/s, {same}{part}", flush=True)
            if count == 3:
                pattern = re.compile(rb"[0-9A-Fa-f]{64,}")

                def by_translate(chunk: bytes) -> tuple[bytes, int]:
                    return chunk, len(hex_runs(chunk))

                def by_hex_regex(chunk: bytes) -> tuple[bytes, int]:
                    return chunk, len([m.span() for m in pattern.finditer(chunk)])

                finds: list[tuple[str, Rewrite]] = [("bytes.translate + bytes.find (kitbuild.digests.hex_runs)", by_translate),
                         ("re `[0-9A-Fa-f]{64,}`", by_hex_regex)]
                found = timed(finds, chunks, args.budget)
                digests_rows += [f"| {label} | {rate:,.0f} |" for label, (rate, _, _) in found.items()]
            data.unlink()
    print("\n| approach | 1 name | 3 names | 30 names | 1,000 names |\n|---|---:|---:|---:|---:|")
    for label, by_count in rows.items():
        print(f"| {label} | " + " | ".join(by_count.get(c, "") for c in (1, 3, 30, 1000)) + " |")
    print("\n| finding printed digests (a digest on every line) | MB/s |\n|---|---:|")
    print("\n".join(digests_rows))


if __name__ == "__main__":
    main()
