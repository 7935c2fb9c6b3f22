"""The promise, first half: "if build succeeds, the kit verifies clean; nothing private gets out".

Over generated benches (see benches.py: 1-3 sources; text, CRLF, JSON, NDJSON, CSV, TSV, YAML,
UTF-16 and binary records printing their sources' absolute paths, machine names, e-mail and
private IPv4 addresses, digests of other files, of excluded files and stale ones in path/digest
pairs; every built-in rule and a user regex rule, in any order, with and without allow entries
and external digests), each build either

- succeeds, and then ``verify`` finds the kit clean, the kit holds no spelling of a source's
  absolute path, the bench's root or a machine name, nor the original digest of a file a rule
  changed, and nothing inside a source changed; or
- is refused with a KitbuildError, and then nothing was written: no kit, no staging folder left
  beside it, no source touched, and the error names no private string.

Any other exception is a crash, which the promise rules out too.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from benches import HOST, Written, benches, forms_found, kit_files, leftovers, sha, snapshot, write_bench
from kitbuild import KitbuildError, build, verify

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def _built(bench: Written, before: dict[str, bytes]) -> None:
    report = verify(bench.out, jobs=1)
    assert report.ok, "build succeeded but verify found:\n" + "\n".join(str(f) for f in report.findings)
    files = kit_files(bench.out)
    found = forms_found(files, bench.secrets())
    assert not found, "the kit holds private text:\n" + "\n".join(found)
    # The original digest of a file a rule changed would confirm a guess at its private text.
    changed = [(kit_path, sha(src.read_bytes())) for kit_path, src in bench.kit_paths.items() if files.get(kit_path) != src.read_bytes()]
    for kit_path, digest in changed:
        for path, data in files.items():
            assert digest.encode() not in data and digest.upper().encode() not in data, f"{path} prints the original sha256 of {kit_path}, which a rule changed"
    assert snapshot(bench.sources) == before, "the build wrote inside a source"
    assert leftovers(bench.out) == []


def _refused(bench: Written, error: KitbuildError, before: dict[str, bytes]) -> None:
    assert not bench.out.exists(), f"refused ({type(error).__name__}) but {bench.out.name}/ was written"
    assert leftovers(bench.out) == [], "a refused build left its staging folder"
    assert snapshot(bench.sources) == before, "a refused build wrote inside a source"
    message = str(error)
    for secret in bench.secrets():
        assert secret not in message and secret.lower() not in message.lower(), f"the error message names {secret!r}:\n{message}"
    for finding in getattr(error, "findings", []):
        assert finding.code.startswith("KB") and not any(name in str(finding).lower() for name in bench.names)


def test_a_build_that_succeeds_verifies_clean_and_a_refused_one_writes_nothing():
    outcomes: Counter[str] = Counter()

    @SETTINGS
    @given(benches())
    def one(spec):
        with tempfile.TemporaryDirectory() as base:
            bench = write_bench(spec, Path(base))
            before = snapshot(bench.sources)
            try:
                build(bench.config, jobs=1)
            except KitbuildError as error:
                outcomes[type(error).__name__] += 1
                _refused(bench, error, before)
                return
            outcomes["built"] += 1
            _built(bench, before)

    one()
    # Both halves of the promise were exercised, or the property says nothing.
    assert outcomes["built"] >= 20, outcomes
    assert outcomes["LeakError"] >= 20, outcomes


def test_the_same_bench_builds_the_same_bytes_into_any_folder():
    @settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(benches())
    def one(spec):
        with tempfile.TemporaryDirectory() as base:
            bench = write_bench(spec, Path(base))
            try:
                build(bench.config, jobs=1)
            except KitbuildError:
                return
            other = Path(base) / "elsewhere" / "kit2"
            build(bench.config, out=other, jobs=1)
            assert kit_files(other) == kit_files(bench.out)

    one()


def test_a_refused_build_leaves_an_earlier_kit_as_it_was():
    from benches import BenchSpec, FileSpec, RulesSpec, SourceSpec, Atom

    rules = RulesSpec(True, False, False, True, False, False, "worker", True, False, (0, 1, 2, 3), (), False)
    good = BenchSpec((SourceSpec("ls-2026-11-07", (FileSpec("f0", "json", (Atom("src_path"), Atom("host")), ascii_json=False),), False),), rules)
    with tempfile.TemporaryDirectory() as base:
        bench = write_bench(good, Path(base))
        build(bench.config, jobs=1)
        kit = kit_files(bench.out)
        (bench.sources[0] / "leak.txt").write_text(f"mailto {HOST.upper()} ada@example.org\n")
        try:
            build(bench.config, jobs=1)
        except KitbuildError as error:
            assert {"KB901", "KB502"} <= {f.code for f in error.findings}
        else:
            raise AssertionError("a bench printing an e-mail address and a machine name was built")
        assert kit_files(bench.out) == kit
        assert leftovers(bench.out) == []


def test_a_build_on_two_workers_verifies_as_on_one():
    from benches import BenchSpec, FileSpec, RulesSpec, SourceSpec, Atom

    rules = RulesSpec(True, True, False, True, True, False, "worker", True, False, (0, 1, 2, 3), (), False)
    files = tuple(
        FileSpec(f"run/f{i}", kind, (Atom("src_path", i), Atom("map_path"), Atom("host"), Atom("short"), Atom("digest", i), Atom("pair", i + 1)), ascii_json=False)
        for i, kind in enumerate(("json", "ndjson", "text", "crlf", "csv", "tsv", "yaml", "json"))
    )
    spec = BenchSpec((SourceSpec("ls-2026-11-07", files, False), SourceSpec("lme-2026-10", files[:3], False)), rules)
    with tempfile.TemporaryDirectory() as base:
        bench = write_bench(spec, Path(base))
        built = build(bench.config, jobs=2)
        assert verify(bench.out, jobs=2).ok
        assert verify(bench.out, jobs=1).digest == built.digest
        assert not forms_found(kit_files(bench.out), bench.secrets())


def test_a_built_kit_verifies_clean_as_a_folder_a_tar_gz_and_a_zip_with_one_digest():
    from kitbuild.commands.publish import publish

    @settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(benches())
    def one(spec):
        with tempfile.TemporaryDirectory() as base:
            bench = write_bench(spec, Path(base))
            try:
                built = build(bench.config, jobs=1)
            except KitbuildError:
                return
            for fmt in ("tar.gz", "zip"):
                archive = Path(base) / f"kit.{fmt}"
                publish(bench.out, fmt, archive)
                report = verify(archive, jobs=1, digest=built.digest)
                assert report.ok, f"{fmt}: " + "\n".join(str(f) for f in report.findings)
                assert report.digest == built.digest

    one()
