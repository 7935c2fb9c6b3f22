"""The promise: "nothing private gets out, in any encoding".

One secret at a time, written into one record in one form: raw UTF-8, JSON \\u escapes (an
escaped letter as in \\u0067pu07, and every non-ASCII character as json.dumps writes it),
every character \\u-escaped, JSON \\/ escapes, percent-encoding, HTML character references,
UTF-16LE/BE with and without a BOM, UTF-32LE/BE, base64 (in JSON, a URL token, a data URI).
Then encoded twice, and inside compressed files. The secrets: the bench's own absolute path
(the bench lies at <tmp>/scratch/u7/runs/lme and no rule rewrites its path), a path under a
`map` key, a machine name box-name-to-role maps (only inside "route", so not in this record),
its short form when only the long one is mapped, and unmapped paths under the mounts that name
a person. Each must stop the build (LeakError) with a KB901 or KB902 finding naming the record,
and write nothing.
"""

from __future__ import annotations

import base64
import bz2
import codecs
import gzip
import io
import re
import lzma
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import pytest
import zstandard

from benches import HOST, MAP_KEY, MAP_TO, SHORT, forms_found, kit_files, leftovers
from kitbuild import LeakError, build, verify
from kittest import make_files, write_kit

MOUNTS = ("home", "scratch", "data", "srv", "work", "nfs", "gpfs", "lustre")
BOX_RULE = {"use": "box-name-to-role", "with": {"names": {HOST: "worker"}, "fields": ["route"]}}
PATH_RULE = {"use": "record-path-to-kit-path", "with": {"map": {MAP_KEY: MAP_TO}}}

# kind -> (the secret, given the bench's absolute path; the rules; the codes that may name it)
SECRETS: dict[str, tuple[Callable[[Path], str], list[dict], set[str]]] = {
    "bench path": (lambda src: f"{src}/a0/run.json", [BOX_RULE], {"KB901"}),
    "map key": (lambda src: MAP_KEY + "/a0/rows.ndjson", [PATH_RULE, BOX_RULE], {"KB901", "KB902"}),
    "machine name": (lambda src: HOST, [PATH_RULE, BOX_RULE], {"KB901"}),
    "short form": (lambda src: SHORT, [PATH_RULE, BOX_RULE], {"KB901"}),
    **{f"/{m}/… unmapped": ((lambda src, m=m: f"/{m}/ada/runs/x.json"), [PATH_RULE, BOX_RULE], {"KB902"}) for m in MOUNTS},
    "/home/josé/… unmapped": (lambda src: "/home/josé/x", [PATH_RULE, BOX_RULE], {"KB902"}),
}


def _first_letter(s: str) -> int:
    return next(i for i, c in enumerate(s) if c.isalpha())


def json_u(s: str) -> str:
    """An escaped letter (\\u0067pu07) and every non-ASCII character escaped, as json.dumps does."""
    i = _first_letter(s)
    s = s[:i] + "\\u%04x" % ord(s[i]) + s[i + 1 :]
    return "".join(c if ord(c) < 128 else "\\u%04x" % ord(c) for c in s)


def json_u_all(s: str) -> str:
    return "".join("\\u%04x" % ord(c) for c in s)


def percent(s: str) -> str:
    """quote(s, safe=''), with the first letter encoded too (a name has no '/' to encode)."""
    i = _first_letter(s)
    return quote(s[:i], safe="") + "%%%02X" % ord(s[i]) + quote(s[i + 1 :], safe="")


def html_refs(s: str) -> str:
    """The first letter as a decimal reference, every '/' as a hex one: as an HTML escaper that
    escapes '/' writes a path, and a name made unsearchable by hand."""
    i = _first_letter(s)
    return s[:i].replace("/", "&#x2F;") + "&#%d;" % ord(s[i]) + s[i + 1 :].replace("/", "&#x2F;")


def wide(encoding: str, bom: bytes = b"") -> Callable[[str], bytes]:
    return lambda s: bom + f"ran on {s} today\r\n".encode(encoding)


# encoding -> (the record's file name, its bytes for a secret)
ENCODINGS: dict[str, tuple[str, Callable[[str], bytes]]] = {
    "raw UTF-8": ("log.txt", lambda s: f"ran on {s} today\n".encode()),
    "JSON \\u escapes": ("log.json", lambda s: ('{"note": "ran on %s today"}\n' % json_u(s)).encode()),
    "JSON, all \\u-escaped": ("log.json", lambda s: ('{"note": "%s"}\n' % json_u_all(s)).encode()),
    "JSON \\/ escapes": ("log.json", lambda s: ('{"note": "ran on %s today"}\n' % s.replace("/", "\\/")).encode()),
    "percent-encoded": ("log.txt", lambda s: f"GET /runs?dir={percent(s)}&n=1 200\n".encode()),
    # as C, Python, JavaScript and YAML's double-quoted strings spell a byte
    "\\x escapes": ("run.yaml", lambda s: ('note: "ran on %s today"\n' % "".join(f"\\x{ord(c):02x}" if c == "/" or i == _first_letter(s) else c for i, c in enumerate(s))).encode()),
    "HTML character references": ("report.html", lambda s: f"<p>ran on <code>{html_refs(s)}</code> today</p>\n".encode()),
    # Markdown (and a regex) spell punctuation so; the page shows it without the backslash
    "Markdown backslash escapes": ("notes.md", lambda s: ("ran on `x` and " + re.sub(r"([-./_@:~])", r"\\\1", s) + " today\n").encode()),
    "UTF-16LE": ("log.txt", wide("utf-16-le")),
    "UTF-16LE with BOM": ("log.txt", wide("utf-16-le", codecs.BOM_UTF16_LE)),
    "UTF-16BE": ("log.txt", wide("utf-16-be")),
    "UTF-16BE with BOM": ("log.txt", wide("utf-16-be", codecs.BOM_UTF16_BE)),
    "UTF-32LE": ("log.txt", wide("utf-32-le")),
    "UTF-32BE": ("log.txt", wide("utf-32-be")),
    # first in a file saved with a byte-order mark (Notepad): the mark is no part of it (UTF-8
    # and UTF-32 too: tests/leaks_test.py)
    "UTF-16LE with BOM, first in the file": ("paths.txt", lambda s: codecs.BOM_UTF16_LE + f"{s}\r\nnext\r\n".encode("utf-16-le")),
    # base64 (every place in a 3-byte group its first byte can take: tests/leaks_test.py)
    "base64 in JSON": ("log.json", lambda s: ('{"blob": "%s"}\n' % base64.b64encode(f"~ran on {s}".encode()).decode()).encode()),
    "base64url in a token": ("log.txt", lambda s: b"GET /x?state=" + base64.urlsafe_b64encode(f"\xff {s}?".encode()).rstrip(b"=") + b" 200\n"),
    "base64 in a data URI": ("report.html", lambda s: b'<a href="data:text/plain;base64,' + base64.b64encode(f"ran on {s} today".encode()) + b'">log</a>\n'),
    "hex digits": ("dump.txt", lambda s: b"payload: " + f"ran on {s} today".encode().hex().encode() + b"\n"),
    "gzip in base64 in JSON": ("log.json", lambda s: b'{"log": "' + base64.b64encode(gzip.compress(f"ran on {s} today\n".encode(), mtime=0)) + b'"}\n'),
    # 76 letters a line (GNU base64, MIME), the secret's letters across the first line end
    "base64 wrapped over lines": ("mail.txt", lambda s: b"attachment:\n" + base64.encodebytes(b"x" * 54 + f" {s} ran".encode())),
}


def _cases():
    for kind in SECRETS:
        for encoding in ENCODINGS:
            if encoding == "JSON \\/ escapes" and kind in ("machine name", "short form"):
                continue  # no '/': the same bytes as raw
            if kind == "map key" and encoding in ("raw UTF-8", "JSON \\/ escapes"):
                continue  # the rule rewrites it: see test_a_map_key_printed_as_the_rule_reads_it_is_rewritten_away
            if "base64" in encoding and kind.startswith("/") and kind not in ("/home/… unmapped", "/scratch/… unmapped", "/home/josé/… unmapped"):
                continue  # every mount is one more anchor of the same kind: three stand for them
            yield pytest.param(kind, encoding, id=f"{kind}-{encoding}")


def bench_with(base: Path, record: str, data: bytes, rules: list[dict]) -> tuple[Path, Path, Path]:
    """A bench at <base>/scratch/u7/runs/lme holding ``notes/<record>``; (kit.yaml, out, source)."""
    base = base.resolve()
    source = base / "scratch" / "u7" / "runs" / "lme"
    make_files(source, {"a0": {"rows.tsv": "qid\troute\nq1\tworker\n"}, "notes": {record: data}})
    config = write_kit(base, out="./kit", sources=[{"path": str(source), "as": "lme"}], rules=rules)
    return config, base / "kit", source


def build_refused(config: Path) -> LeakError:
    try:
        build(config, jobs=1)
    except LeakError as error:
        return error
    raise AssertionError("the build succeeded")


@pytest.mark.parametrize("kind, encoding", list(_cases()))
def test_a_secret_in_any_encoding_stops_the_build(kind, encoding):
    secret_of, rules, codes = SECRETS[kind]
    record, encode = ENCODINGS[encoding]
    with tempfile.TemporaryDirectory() as base:
        source = Path(base).resolve() / "scratch" / "u7" / "runs" / "lme"
        secret = secret_of(source)
        data = encode(secret)
        config, out, _ = bench_with(Path(base), record, data, rules)
        try:
            build(config, jobs=1)
        except LeakError as error:
            named = {(f.code, f.path) for f in error.findings}
            assert any(code in codes and path == f"lme/notes/{record}" for code, path in named), named
            assert not out.exists() and leftovers(out) == []
            assert secret not in str(error) and str(source) not in str(error)
        else:
            found = forms_found(kit_files(out), [secret])
            raise AssertionError(f"built, with {encoding} {kind} in lme/notes/{record}: {found or data[:120]!r}")


@pytest.mark.parametrize(
    "printed, written",
    [
        ('{"rows": "%s/a0/rows.ndjson"}' % MAP_KEY, '{"rows": "lme-2026-10/a0/rows.ndjson"}'),
        # JSON's escaped '/' (PHP writes every one so) and a URL's percent-encoding: the rule reads
        # the path in the spellings the gate decodes, and writes the kit path as it is.
        ('{"rows": "%s\\/a0"}' % MAP_KEY.replace("/", "\\/"), '{"rows": "lme-2026-10\\/a0"}'),
        ('{"url": "/x?dir=%s%%2Fa0&n=1"}' % quote(MAP_KEY, safe=""), '{"url": "/x?dir=lme-2026-10%2Fa0&n=1"}'),
    ],
)
def test_a_map_key_printed_as_the_rule_reads_it_is_rewritten_away(printed, written):
    with tempfile.TemporaryDirectory() as base:
        config, out, _ = bench_with(Path(base), "log.json", (printed + "\n").encode(), [PATH_RULE, BOX_RULE])
        build(config, jobs=1)
        assert (out / "lme" / "notes" / "log.json").read_bytes() == (written + "\n").encode()
        assert verify(out, jobs=1).ok
        assert forms_found(kit_files(out), [MAP_KEY, "/scratch/u7"]) == []


def test_the_secrets_of_a_refused_build_are_named_by_kind_not_by_text():
    with tempfile.TemporaryDirectory() as base:
        source = Path(base).resolve() / "scratch" / "u7" / "runs" / "lme"
        text = f"{source}/a0 on {SHORT} and {HOST}, /home/ada/x\n"
        config, out, _ = bench_with(Path(base), "log.txt", text.encode("utf-16-le"), [PATH_RULE, BOX_RULE])
        error = build_refused(config)
        message = str(error)
        for secret in (str(source), SHORT, HOST, "/home/ada", "u7"):
            assert secret not in message
        assert {"KB901", "KB902"} <= {f.code for f in error.findings}


# -- beyond one encoding -----------------------------------------------------------------------------
#
# A secret encoded twice is as readable to a reader as in any form above. Windows tools write
# UTF-16; .NET's DataContractJsonSerializer writes '/' as '\\/'; a URL in a UTF-16 log is
# percent-encoded, and a URL inside a query string is percent-encoded again.

COMPOSED: dict[str, Callable[[str], bytes]] = {
    **{
        f"{encoding} of JSON \\/ escapes": (lambda s, e=encoding: ('{"note": "%s"}\r\n' % s.replace("/", "\\/")).encode(e))
        for encoding in ("UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE")
    },
    "UTF-16LE of JSON \\u escapes": lambda s: ('{"note": "%s"}\r\n' % json_u(s)).encode("utf-16-le"),
    "UTF-16BE with BOM, every character \\u-escaped": lambda s: codecs.BOM_UTF16_BE + ('{"note": "%s"}\r\n' % json_u_all(s)).encode("utf-16-be"),
    "UTF-32LE of JSON \\u escapes": lambda s: ('{"note": "%s"}\r\n' % json_u(s)).encode("utf-32-le"),
    "UTF-16LE of percent-encoding": lambda s: f"GET /runs?dir={percent(s)}\r\n".encode("utf-16-le"),
    "UTF-16LE of \\x escapes": lambda s: ('"%s"\r\n' % "".join(f"\\x{ord(c):02x}" for c in s)).encode("utf-16-le"),
    "UTF-32BE of percent-encoding": lambda s: f"GET /runs?dir={percent(s)}\r\n".encode("utf-32-be"),
    "percent-encoded twice": lambda s: f"GET /runs?next={quote(percent(s), safe='')}\n".encode(),
    "percent-encoded three times": lambda s: f"GET /a?b={quote(quote(percent(s), safe=''), safe='')}\n".encode(),
    "UTF-16LE of HTML character references": lambda s: f"<p>ran on {html_refs(s)}</p>\r\n".encode("utf-16-le"),
    "UTF-16LE of percent-encoding twice, deep in a log": lambda s: ("x\r\n" * 5000 + f"GET /runs?next={quote(percent(s), safe='')}\r\n").encode("utf-16-le"),
}


@pytest.mark.parametrize(
    "kind, composed",
    [
        pytest.param(kind, composed, id=f"{kind}-{composed}")
        for kind in ("bench path", "machine name", "short form", "/home/… unmapped", "/home/josé/… unmapped")
        for composed in COMPOSED
        if not ("name" in kind or "form" in kind) or "\\/" not in composed  # no '/': plain UTF-16, found
    ],
)
def test_a_secret_encoded_twice_stops_the_build(kind, composed):
    secret_of, rules, codes = SECRETS[kind]
    with tempfile.TemporaryDirectory() as base:
        source = Path(base).resolve() / "scratch" / "u7" / "runs" / "lme"
        config, out, _ = bench_with(Path(base), "log.txt", COMPOSED[composed](secret_of(source)), rules)
        error = build_refused(config)
        assert any(f.code in codes and f.path == "lme/notes/log.txt" for f in error.findings)
        assert not out.exists()


# -- a machine name as a record spells it ------------------------------------------------------------

@pytest.mark.parametrize(
    "spelling",
    [
        pytest.param("GPU07.LAB.EXAMPLE.ORG", id="upper"),
        pytest.param("GPU07.lab.example.org", id="NetBIOS-style"),
        pytest.param("Gpu07.Lab.Example.Org", id="title"),
        pytest.param("Gpu07", id="title-short"),
        pytest.param("gPU07.lAB.example.ORG", id="mixed"),
    ],
)
def test_a_machine_name_in_another_case_stops_the_build(spelling):
    with tempfile.TemporaryDirectory() as base:
        config, out, _ = bench_with(Path(base), "log.txt", f"ran on {spelling}\n".encode(), [PATH_RULE, BOX_RULE])
        error = build_refused(config)
        assert "KB901" in {f.code for f in error.findings}
        assert not out.exists()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("rank 0 on gpu07: ok", id="alone"),
        pytest.param("ran on gpu07.", id="end of sentence"),
        pytest.param("host=gpu07,rank=0", id="key=value"),
        pytest.param("host_gpu07_rank0", id="underscores"),
        pytest.param("/var/log/gpu07_rank0.log", id="in a file name"),
    ],
)
def test_a_short_machine_name_between_separators_stops_the_build(text):
    with tempfile.TemporaryDirectory() as base:
        config, out, _ = bench_with(Path(base), "log.txt", (text + "\n").encode(), [PATH_RULE, BOX_RULE])
        error = build_refused(config)
        assert "KB901" in {f.code for f in error.findings}


# -- inside a compressed file --------------------------------------------------------------------
#
# A record published as runs.jsonl.gz is text to anyone with zcat. A rule never rewrites inside a
# compressed file (build copies it as it is), so a secret in one must stop the build, wherever it
# lies and however deep the layers go.


def _tar_gz(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("logs/run.log")
        info.size, info.uname, info.gname = len(data), "runner", "runner"
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(data: bytes, method: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        archive.writestr("docProps/app.xml", "<Properties/>")
        archive.writestr("xl/sharedStrings.xml", data)
    return buffer.getvalue()


COMPRESSED: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("log.txt.gz", gzip.compress),
    "bzip2": ("log.txt.bz2", bz2.compress),
    "xz": ("log.txt.xz", lzma.compress),
    "zstandard": ("log.txt.zst", lambda d: zstandard.ZstdCompressor().compress(d)),
    "gzip, two members, the secret in the second": ("log.txt.gz", lambda d: gzip.compress(b"first\n" * 9000) + gzip.compress(d)),
    "gzip, deep past a megabyte": ("log.txt.gz", lambda d: gzip.compress(b"x" * 3_000_001 + b"\n" + d)),
    "tar.gz": ("logs.tar.gz", _tar_gz),
    "zip, deflated": ("logs.zip", lambda d: _zip(d, zipfile.ZIP_DEFLATED)),
    "xlsx (a zip), bzip2 member": ("results.xlsx", lambda d: _zip(d, zipfile.ZIP_BZIP2)),
    "gzip stored in a zip": ("logs.zip", lambda d: _zip(gzip.compress(d), zipfile.ZIP_STORED)),
    "xz of gzip": ("log.txt.gz.xz", lambda d: lzma.compress(gzip.compress(d))),
    "zstandard of xz of gzip": ("log.txt.gz.xz.zst", lambda d: zstandard.ZstdCompressor().compress(lzma.compress(gzip.compress(d)))),
}


@pytest.mark.parametrize(
    "kind, compressed, encoding",
    [
        pytest.param(kind, compressed, encoding, id=f"{kind}-{compressed}-{encoding}")
        for kind in ("bench path", "machine name", "/home/… unmapped")
        for compressed in COMPRESSED
        for encoding in ("raw UTF-8", "UTF-16LE", "percent-encoded")
        # every compression with one secret; each kind of secret in a gzip and a zip
        if (encoding == "raw UTF-8" and (kind == "bench path" or compressed in ("gzip", "zip, deflated"))) or (compressed == "gzip" and kind != "machine name")
    ],
)
def test_a_secret_inside_a_compressed_file_stops_the_build(kind, compressed, encoding):
    secret_of, rules, codes = SECRETS[kind]
    name, compress = COMPRESSED[compressed]
    with tempfile.TemporaryDirectory() as base:
        source = Path(base).resolve() / "scratch" / "u7" / "runs" / "lme"
        _, encode = ENCODINGS[encoding]
        config, out, _ = bench_with(Path(base), name, compress(encode(secret_of(source))), rules)
        error = build_refused(config)
        inside = [f for f in error.findings if f.path == f"lme/notes/{name}" and f.code in codes]
        assert any(re.match(r"in its (zip member \d+|\w+ content)(, in its .*)? at line \d+, column \d+: ", f.message) for f in inside), error.findings
        assert not out.exists() and leftovers(out) == []
        assert str(source) not in str(error)
        assert "decompress it in the bench" in str(error)
