"""How fast the leak gate scans: `python -m bench.leaks_speed [MB]`.

Clean record text (JSON lines with relative paths, sha256 digests, numbers, 'recall@10' keys:
no shape, no private string) with 10 and with 1,000 private strings, and random bytes scanned
as binary, each in windows of 4 MiB overlapping by MAX_MATCH as a file is streamed. Also the
two ways of searching many literals at once that kitbuild.leaks chose between.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
import sys
import time
from typing import Callable

import ahocorasick_rs

from kitbuild.leaks import LeakScanner

WINDOW = 4 << 20


def records(size: int, seed: int = 0) -> bytes:
    """Deterministic benchmark records, ``size`` bytes of JSON lines."""
    rnd = random.Random(seed)
    benches = ["learned-sparse", "dense-retrieval", "bm25-baseline", "colbert-v2", "splade"]
    lines, total, i = [], 0, 0
    while total < size:
        bench = rnd.choice(benches)
        record = {
            "bench": bench,
            "run": f"run-{i % 997:04d}",
            "path": f"{bench}/run/rows-{i % 50:03d}.ndjson",
            "sha256": hashlib.sha256(i.to_bytes(8, "little")).hexdigest(),
            "parent": "sha256:" + hashlib.sha256(b"p" + i.to_bytes(8, "little")).hexdigest(),
            "score": round(rnd.random(), 6),
            "latency_ms": round(rnd.uniform(1, 900), 3),
            "recall@10": round(rnd.random(), 4),
            "n": rnd.randint(1, 100000),
            "version": f"1.{rnd.randint(0, 20)}.{rnd.randint(0, 9)}",
            "note": "ok" if i % 7 else "retried after timeout; see log/rows.txt",
        }
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        lines.append(line)
        total += len(line)
        i += 1
    return b"".join(lines)[:size]


def private_strings(n: int, seed: int = 1) -> dict[str, str]:
    """``n`` private strings: half source paths, half machine and user names."""
    rnd = random.Random(seed)
    out: dict[str, str] = {}
    while len(out) < n:
        if len(out) % 2:
            text = "/scratch/" + "".join(rnd.choices(string.ascii_lowercase, k=6)) + "/runs/" + "".join(rnd.choices(string.ascii_lowercase, k=8))
        else:
            text = "".join(rnd.choices(string.ascii_lowercase, k=4)) + str(rnd.randint(10, 99))
        out[text] = f"private string {len(out)}"
    return out


def mb_per_s(data: bytes, run: Callable[[bytes], object], rounds: int = 2) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run(data)
        best = min(best, time.process_time() - start)
    return len(data) / best / 1e6


def streamed(scanner: LeakScanner, binary: bool) -> Callable[[bytes], object]:
    half = LeakScanner.MAX_MATCH // 2

    def run(data: bytes) -> object:
        view = memoryview(data)
        found, start = [], 0
        while True:
            end = min(len(data), start + WINDOW)
            lo = 0 if start == 0 else half
            hi = end - start if end == len(data) else end - start - half
            found += scanner.scan(bytes(view[start:end]), binary=binary, lo=lo, hi=hi)
            if end == len(data):
                return found
            start = end - LeakScanner.MAX_MATCH

    return run


def main(size_mb: int = 200) -> None:
    size = size_mb * 1_000_000
    text = records(size)
    noise = random.Random(2).randbytes(size)
    digests = {hashlib.sha256(str(i).encode()).hexdigest(): f"digest {i}" for i in range(200)}
    for n in (10, 1000):
        scanner = LeakScanner(private_strings(n), allow=["/data/shared"], digests=digests)
        assert not streamed(scanner, False)(text[: 10 * WINDOW]), "the benchmark text must be clean"
        print(f"records, {n} private strings, 200 digests: {mb_per_s(text, streamed(scanner, False)):.0f} MB/s")
        print(f"random bytes as binary, {n} private strings, 200 digests: {mb_per_s(noise, streamed(scanner, True)):.0f} MB/s")
    print(f"records, generic shapes only (verify): {mb_per_s(text, streamed(LeakScanner(), False)):.0f} MB/s")
    print(f"random bytes as binary, generic shapes only (verify): {mb_per_s(noise, streamed(LeakScanner(), True)):.0f} MB/s")

    # The choice of matcher for many literals: one pass of each over 50 MB of records.
    sample = text[:50_000_000]
    for n in (10, 1000):
        literals = sorted((s.encode() for s in private_strings(n)), key=len, reverse=True)
        automaton = ahocorasick_rs.BytesAhoCorasick(literals, matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST, implementation=ahocorasick_rs.Implementation.DFA)
        alternation = re.compile(b"|".join(map(re.escape, literals)))
        print(f"{n} literals: ahocorasick_rs {mb_per_s(sample, automaton.find_matches_as_indexes):.0f} MB/s, "
              f"re alternation {mb_per_s(sample, lambda d: list(alternation.finditer(d)), rounds=1):.0f} MB/s")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
