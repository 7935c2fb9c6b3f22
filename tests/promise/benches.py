"""Benches for the promise tests: generated private benches, the secrets they hold, and what to
look for in a kit or an error afterwards.

The promise (the issue's words): "if build succeeds, the kit verifies clean; nothing private
gets out, in any encoding; every change to a kit is caught; no input crashes or hangs it."

A bench is drawn as data (:class:`BenchSpec`: sources, files, the atoms each file prints, and
the kit.yaml rules) and written under a folder only in the test's body, because what a record
prints depends on where the bench lies (its absolute paths) and on the bytes of the files it
names (their digests). A file may print the digest of, or pair a path with, only a file written
before it, so every digest a bench prints is one of a file as the bench wrote it.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import hypothesis.strategies as st
import orjson

from kittest import USER_REGEX_RULE, make_files, write_kit

HOST = "gpu07.lab.example.org"  # a machine name box-name-to-role maps
SHORT = "gpu07"  # its short form: private even where only the long form is mapped
MAP_KEY = "/scratch/u7/runs/lme-2026-10"  # a path the records print, mapped by record-path-to-kit-path
MAP_TO = "lme-2026-10"
PLACEHOLDER = "withheld-2026-09-29"
HOME = "/home/ada/runs/x.json"  # an unmapped private path shape
EMAIL = "ada@example.org"
IPV4 = "10.1.2.3"
# The bench's root holds a non-ASCII letter and a space, so its JSON \u-escaped spelling is not
# its raw one, and a path rule must match a prefix with a space in it.
BENCH_DIR = "lab josé"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- what a record prints ------------------------------------------------------------------------

# Most atoms are ones a rule or an allow entry can cover; a bench drawn "risky" also prints the
# rest, which only a refusal can handle (or an allow entry, for an e-mail, an IPv4 or /home/ada).
COMMON_ATOMS = (
    "word",  # a plain word or number
    "src_path",  # a source's absolute path and a file in it
    "src_root",  # a source's absolute path alone
    "map_path",  # a path under MAP_KEY
    "host",  # HOST, in a "route" field when the file has fields
    "digest",  # the sha256 of an earlier file of the bench, as the bench wrote it
    "pair",  # {"path": <absolute path of an earlier file>, "sha256": <its digest>}
    "box",  # what the user regex rule rewrites
)
RARE_ATOMS = (
    "host_upper",  # HOST in capitals (Windows prints it so)
    "short",  # SHORT
    "email",
    "ip",
    "home",  # an unmapped /home path
    "excluded_digest",  # the sha256 of a file the kit excludes
    "stale_pair",  # a pair whose digest is not the file's
    "placeholder",  # the digest-withheld placeholder, already in a record
)
WORDS = ("recall@10", "0.4213", "ok", "q17", "café", "naïve", "s01 s02", "1,234", "a=b")
KINDS = ("text", "crlf", "json", "ndjson", "csv", "tsv", "yaml", "utf16", "binary")
EXTENSION = {"text": "txt", "crlf": "log", "json": "json", "ndjson": "ndjson", "csv": "csv", "tsv": "tsv", "yaml": "yaml", "utf16": "txt", "binary": "bin"}


@dataclass(frozen=True)
class Atom:
    what: str
    arg: int = 0  # which word, source or earlier file
    spelling: int = 0  # a digest: 0 lower case, 1 upper case, 2 'sha256:' prefixed


@dataclass(frozen=True)
class FileSpec:
    name: str  # relative to its source, without the extension
    kind: str
    atoms: tuple[Atom, ...]
    variant: int = 0  # utf16: bit 0 big-endian, bit 1 a BOM; binary: the random seed
    in_route: bool = False  # JSON kinds: print atoms under "route" (a field box-name-to-role may name)
    ascii_json: bool = True  # JSON kinds: json.dumps's ensure_ascii
    pad: int = 0  # line-based kinds: filler lines before the atoms, up to about this many bytes

    @property
    def filename(self) -> str:
        return f"{self.name}.{EXTENSION[self.kind]}"


@dataclass(frozen=True)
class SourceSpec:
    name: str
    files: tuple[FileSpec, ...]
    excluded: bool  # holds skip/secret.txt, which the config excludes


@dataclass(frozen=True)
class RulesSpec:
    path_rule: bool
    map_key: bool  # the path rule maps MAP_KEY
    map_interacts: bool  # ... and MAP_KEY/a0 to box-3, which the regex rule rewrites again
    box_rule: bool
    short_mapped: bool
    fields: bool  # box-name-to-role only inside "route"
    role: str
    digest_rule: bool
    regex_rule: bool
    order: tuple[int, ...]  # a permutation of the rules present
    allow: tuple[str, ...]
    external: bool  # the excluded files' digests are declared external


def rules_spec(**changes: Any) -> RulesSpec:
    """Every built-in rule, MAP_KEY mapped, both machine names mapped: a bench printing only
    source paths, map paths, machine names and digests builds. ``changes`` override fields."""
    base = dict(
        path_rule=True, map_key=True, map_interacts=False, box_rule=True, short_mapped=True, fields=False,
        role="worker", digest_rule=True, regex_rule=False, order=(0, 1, 2, 3), allow=(), external=False,
    )
    return RulesSpec(**{**base, **changes})


@dataclass(frozen=True)
class BenchSpec:
    sources: tuple[SourceSpec, ...]
    rules: RulesSpec


@dataclass
class Written:
    """A bench on disk: its kit.yaml, where the kit goes, and what must never leave it."""

    root: Path
    config: Path
    out: Path
    sources: list[Path]
    kit_paths: dict[str, Path] = field(default_factory=dict)  # kit path -> the bench file
    names: tuple[str, ...] = ()  # the machine names the config makes private

    def secrets(self) -> list[str]:
        """Private text no kit and no error message may hold: each source's absolute paths (as
        given and resolved), the bench's root, and the machine names the config names."""
        paths = {str(p) for p in self.sources} | {os.path.realpath(p) for p in self.sources} | {str(self.root)}
        return sorted(paths) + list(self.names)


def render_atom(atom: Atom, ctx: "_Context") -> Any:
    """The value an atom prints: a string, or a dict for a pair."""
    what = atom.what
    if what == "word":
        return WORDS[atom.arg % len(WORDS)]
    if what in ("src_path", "src_root"):
        s = atom.arg % len(ctx.sources)
        if what == "src_root":
            return str(ctx.sources[s])
        names = ctx.names[s] or ["missing/x.json"]
        return f"{ctx.sources[s]}/{names[atom.arg % len(names)]}"
    if what == "map_path":
        return MAP_KEY + "/a0/run/rows.ndjson"
    if what == "host":
        return HOST
    if what == "host_upper":
        return HOST.upper()
    if what == "short":
        return SHORT
    if what == "email":
        return EMAIL
    if what == "ip":
        return IPV4
    if what == "home":
        return HOME
    if what == "box":
        return f"box-{atom.arg % 10}"
    if what == "placeholder":
        return PLACEHOLDER
    if what == "excluded_digest":
        if not ctx.excluded:
            return WORDS[0]
        return _spell(sha(ctx.excluded[atom.arg % len(ctx.excluded)]), atom.spelling)
    if not ctx.earlier:
        return WORDS[1]
    path, data = ctx.earlier[atom.arg % len(ctx.earlier)]
    if what == "digest":
        return _spell(sha(data), atom.spelling)
    said = sha(data) if what == "pair" else sha(b"stale " + data)
    return {"path": path, "sha256": _spell(said, atom.spelling)}


def _spell(digest: str, spelling: int) -> str:
    return (digest, digest.upper(), "sha256:" + digest)[spelling % 3]


@dataclass
class _Context:
    sources: list[Path]
    names: list[list[str]]  # each source's file names
    excluded: list[bytes]  # the excluded files' bytes
    earlier: list[tuple[str, bytes]] = field(default_factory=list)  # (absolute path, bytes) written so far


def render_file(spec: FileSpec, ctx: _Context) -> bytes:
    return _padded(spec.kind, _render(spec, ctx), spec.pad)


# Where padding puts a file's atoms: about the binary sniff's end (8 KiB) and a read block's
# (1 MiB), where a build's chunks and verify's blocks differ.
PADS = (8192 - 37, 8192 + 5, (1 << 20) - 61, (1 << 20) + 3)
_LINE_KINDS = ("text", "crlf", "ndjson", "csv", "tsv", "yaml")


def _padded(kind: str, data: bytes, pad: int) -> bytes:
    if not pad or kind not in _LINE_KINDS:
        return data
    header = b""
    if kind in ("csv", "tsv"):
        first, _, data = data.partition(b"\n")
        header = first + b"\n"
    end = b"\r\n" if kind in ("crlf", "csv") else b"\n"

    def line(n: int) -> bytes:  # a filler line of n bytes, its line end included
        if kind == "ndjson":
            return b'{"pad": "' + b"." * (n - 11 - len(end)) + b'"}' + end
        if kind == "yaml":
            return b"pad: " + b"." * (n - 5 - len(end)) + end
        return b"#" * (n - len(end)) + end

    need = pad - len(header)
    filler = line(100) * (need // 100)
    if need % 100 >= 20:
        filler += line(need % 100)
    return header + filler + data


def _render(spec: FileSpec, ctx: _Context) -> bytes:
    values = [render_atom(a, ctx) for a in spec.atoms]
    text_values = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=spec.ascii_json) for v in values]
    kind = spec.kind
    if kind in ("text", "crlf"):
        end = "\r\n" if kind == "crlf" else "\n"
        lines = [f"line {i}: {v}" for i, v in enumerate(text_values)] or ["empty record"]
        return (end.join(lines) + end).encode("utf-8")
    if kind == "json":
        key = "route" if spec.in_route else "value"
        doc = {"run": "s1", "items": [{key: v} if isinstance(v, str) else v for v in values]}
        return (json.dumps(doc, ensure_ascii=spec.ascii_json, indent=1) + "\n").encode("utf-8")
    if kind == "ndjson":
        key = "route" if spec.in_route else "value"
        rows = [json.dumps({"qid": f"q{i}", key: v} if isinstance(v, str) else v, ensure_ascii=spec.ascii_json) for i, v in enumerate(values)]
        return ("\n".join(rows or ['{"qid": "q0"}']) + "\n").encode("utf-8")
    if kind == "csv":
        return ("qid,value\r\n" + "".join(f"q{i},{json.dumps(v, ensure_ascii=spec.ascii_json) if ',' in v else v}\r\n" for i, v in enumerate(text_values))).encode("utf-8")
    if kind == "tsv":
        header = "qid\troute\n" if spec.in_route else "qid\tvalue\n"
        return (header + "".join(f"q{i}\t{v}\n" for i, v in enumerate(text_values))).encode("utf-8")
    if kind == "yaml":
        return ("".join(f"k{i}: {v}\n" for i, v in enumerate(text_values)) or "empty: true\n").encode("utf-8")
    if kind == "utf16":
        big, bom = bool(spec.variant & 1), bool(spec.variant & 2)
        text = "".join(f"{v}\r\n" for v in text_values) or "empty\r\n"
        return ((codecs.BOM_UTF16_BE if big else codecs.BOM_UTF16_LE) if bom else b"") + text.encode("utf-16-be" if big else "utf-16-le")
    assert kind == "binary"
    rnd = random.Random(spec.variant)
    noise = bytes(rnd.getrandbits(8) for _ in range(64))
    return b"\x89BIN\x00" + noise + b"".join(v.encode("utf-8") + b"\x00" + noise[:8] for v in text_values)


def write_bench(spec: BenchSpec, base: Path) -> Written:
    """Write the bench and its kit.yaml under ``base`` (a fresh folder)."""
    root = (base / BENCH_DIR).resolve()
    root.mkdir(parents=True)
    sources = [root / "bench" / s.name for s in spec.sources]
    names = [[f.filename for f in s.files] for s in spec.sources]
    excluded = [f"kept out of {s.name}, on {HOST}\n".encode() for s in spec.sources if s.excluded]
    ctx = _Context(sources, names, excluded)
    written = Written(root, root / "kit.yaml", root / "kit", sources, names=(HOST, SHORT) if spec.rules.box_rule else ())
    for src, s in zip(sources, spec.sources):
        tree: dict[str, Any] = {}
        for f in s.files:
            data = render_file(f, ctx)
            tree[f.filename] = data
            ctx.earlier.append((f"{src}/{f.filename}", data))
            written.kit_paths[f"{s.name}/{f.filename}"] = src / f.filename
        if s.excluded:
            tree["skip"] = {"secret.txt": f"kept out of {s.name}, on {HOST}\n"}
        make_files(src, tree)
    write_kit(root, **config_of(spec, root))
    return written


def config_of(spec: BenchSpec, root: Path) -> dict[str, Any]:
    r = spec.rules
    present: list[dict[str, Any]] = []
    if r.path_rule:
        rule: dict[str, Any] = {"use": "record-path-to-kit-path"}
        if r.map_key:
            mapping = {MAP_KEY: MAP_TO}
            if r.map_interacts:
                mapping[MAP_KEY + "/a0"] = "box-3"
            rule["with"] = {"map": mapping}
        present.append(rule)
    if r.box_rule:
        names = {HOST: r.role, **({SHORT: r.role} if r.short_mapped else {})}
        present.append({"use": "box-name-to-role", "with": {"names": names, **({"fields": ["route"]} if r.fields else {})}})
    if r.digest_rule:
        present.append({"use": "digest-withheld", "with": {"placeholder": PLACEHOLDER}})
    if r.regex_rule:
        (root / "host-to-label.yaml").write_text(USER_REGEX_RULE, encoding="utf-8")
        present.append({"use": "./host-to-label.yaml"})
    order = [i for i in r.order if i < len(present)]
    rules = [present[i] for i in order] + [p for i, p in enumerate(present) if i not in order]
    config: dict[str, Any] = {
        "out": "./kit",
        "sources": [
            {"path": f"bench/{s.name}", "as": s.name, "about": f"run {i}", **({"exclude": ["skip/**"]} if s.excluded else {})}
            for i, s in enumerate(spec.sources)
        ],
        "rules": rules,
    }
    if r.allow:
        config["allow"] = [{"text": t, "why": "a shared, public name used in a test"} for t in r.allow]
    if r.external and any(s.excluded for s in spec.sources):
        config["external_digests"] = {sha(f"kept out of {s.name}, on {HOST}\n".encode()): f"the excluded note of {s.name}" for s in spec.sources if s.excluded}
    return config


# -- the strategy ---------------------------------------------------------------------------------


@st.composite
def atoms(draw: Any, risky: bool) -> Atom:
    # Words and digests twice as likely: most of what a record prints is neither private nor a path.
    common = COMMON_ATOMS + ("word", "digest")
    what = draw(st.sampled_from(common + RARE_ATOMS if risky else common))
    return Atom(what, draw(st.integers(0, 20)), draw(st.integers(0, 2)))


@st.composite
def file_specs(draw: Any, index: int, risky: bool) -> FileSpec:
    kind = draw(st.sampled_from(KINDS if risky else tuple(k for k in KINDS if k not in ("utf16", "binary"))))
    nested = draw(st.booleans())
    name = f"{'run/' if nested else ''}f{index}"
    return FileSpec(
        name,
        kind,
        tuple(draw(st.lists(atoms(risky), max_size=4))),
        draw(st.integers(0, 3)),
        draw(st.booleans()),
        # Python's json.dumps escapes the bench's 'é' by default, which no rule rewrites.
        risky and draw(st.booleans()),
        draw(st.sampled_from((0,) * 16 + PADS)),
    )


SOURCE_NAMES = ("ls-2026-11-07", "lme-2026-10", "bm25-a0")


@st.composite
def benches(draw: Any) -> BenchSpec:
    risky = draw(st.booleans())
    n_sources = draw(st.integers(1, 3))
    sources = []
    index = 0
    for s in range(n_sources):
        n_files = draw(st.integers(1, 4))
        files = []
        for _ in range(n_files):
            files.append(draw(file_specs(index, risky)))
            index += 1
        sources.append(SourceSpec(SOURCE_NAMES[s], tuple(files), draw(st.booleans())))
    # A bench that is not risky prints only what its rules cover, so that about half the benches build.
    rules = RulesSpec(
        path_rule=draw(st.booleans()) or not risky,
        map_key=draw(st.booleans()) or not risky,
        map_interacts=risky and draw(st.booleans()),
        box_rule=draw(st.booleans()) or not risky,
        short_mapped=draw(st.booleans()),
        fields=risky and draw(st.booleans()),
        role=draw(st.sampled_from(("worker", "desktop", "box-5") if risky else ("worker", "desktop"))),
        digest_rule=draw(st.booleans()) or not risky,
        regex_rule=draw(st.booleans()),
        order=tuple(draw(st.permutations(range(4)))),
        allow=tuple(draw(st.lists(st.sampled_from(("/home/ada", EMAIL, IPV4)), unique=True, max_size=3))),
        external=draw(st.booleans()),
    )
    return BenchSpec(tuple(sources), rules)


# -- looking for secrets --------------------------------------------------------------------------


def spellings(secret: str) -> dict[str, bytes]:
    """The forms of ``secret`` a kit must never hold: raw, UTF-16LE/BE, JSON-escaped."""
    forms = {
        "raw": secret.encode("utf-8"),
        "UTF-16LE": secret.encode("utf-16-le"),
        "UTF-16BE": secret.encode("utf-16-be"),
        "JSON ensure_ascii": json.dumps(secret)[1:-1].encode("ascii"),
        "JSON with \\/": json.dumps(secret)[1:-1].replace("/", "\\/").encode("ascii"),
    }
    return forms


def kit_files(kit: Path) -> dict[str, bytes]:
    return {p.relative_to(kit).as_posix(): p.read_bytes() for p in sorted(kit.rglob("*")) if p.is_file()}


def forms_found(files: dict[str, bytes], secrets: Iterable[str]) -> list[str]:
    """'<kit path>: <form> of <secret>' for every spelling of a secret in a kit's files."""
    out = []
    for secret in secrets:
        for form, needle in spellings(secret).items():
            for path, data in files.items():
                if needle in data:
                    out.append(f"{path}: {form} of {secret!r}")
    return out


def leftovers(out: Path) -> list[str]:
    """Staging folders a build left beside ``out``."""
    if not out.parent.exists():
        return []
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.kitbuild-") or p.name.startswith(f".{out.name}.old-"))


def snapshot(folders: Iterable[Path]) -> dict[str, bytes]:
    """Every file under ``folders``, to show that a build wrote nothing inside a source."""
    out: dict[str, bytes] = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                out[str(p)] = p.read_bytes()
            elif p.is_dir():
                out[str(p) + "/"] = b""
    return out


# -- kits to tamper with --------------------------------------------------------------------------

TEMPLATE = "# {{ title }}\n\n{{ records }} records in {{ folders|length }} folder(s), dated {{ date }}.\n"


def write_tamper_bench(root: Path, n: int, *, template: bool = False) -> Path:
    """A bench of one source with ``n`` small text records (the first names a machine that
    box-name-to-role rewrites), an allow entry, and optionally a README template; its kit.yaml."""
    records = {f"r{i:05d}.txt": f"record {i} of the run\n" for i in range(n)}
    records["r00000.txt"] = f"record 0 ran on {HOST}\n"
    make_files(root / "src", records)
    config: dict[str, Any] = {
        "out": "./kit",
        "sources": [{"path": "src", "as": "runs", "about": "one run"}],
        "rules": [{"use": "box-name-to-role", "with": {"names": {HOST: "worker"}}}],
        "allow": [{"text": "/home/ada", "why": "a shared folder that names no person"}],
    }
    if template:
        (root / "README.md.j2").write_text(TEMPLATE, encoding="utf-8")
        config["readme"] = {"template": "./README.md.j2"}
    return write_kit(root, **config)


def kit_digest_of(kit: Path) -> str:
    """What a kit's one digest is: 'sha256:' and the sha256 of its index.json."""
    return "sha256:" + sha((kit / "index.json").read_bytes())


def rewrite_sums(kit: Path) -> None:
    """SHA256SUMS written again, as kitbuild writes it, for the record files index.json lists."""
    from kitbuild.index import sums_of

    index = orjson.loads((kit / "index.json").read_bytes())
    from kitbuild.metadata import METADATA_FILES

    records = {e["path"]: sha((kit / e["path"]).read_bytes()) for e in index["files"] if e["path"] != "SHA256SUMS" and not e["path"].startswith("_templates/") and e["path"] not in METADATA_FILES}
    (kit / "SHA256SUMS").write_bytes(sums_of(records))


def repin(kit: Path) -> None:
    """index.json written again, as kitbuild writes it, with every listed file's size and digest
    (SHA256SUMS and a template included) and provenance.json's, as the files are now: what a
    careful tamperer does after changing them. The pages are left alone."""
    from kitbuild.index import entry, index_bytes

    from kitbuild.kitfs import FolderKit
    from kitbuild.metadata import CITATION, CROISSANT, write_citation, write_croissant

    index = orjson.loads((kit / "index.json").read_bytes())
    entries = [entry(e["path"], (kit / e["path"]).read_bytes()) for e in index["files"] if (kit / e["path"]).is_file() and e["path"] != CROISSANT]
    # croissant.json and CITATION.cff written again as kitbuild writes them, as a tamperer would.
    document = orjson.loads((kit / "provenance.json").read_bytes())
    cff = write_citation(document)
    if cff is not None and (kit / CITATION).is_file():
        (kit / CITATION).write_bytes(cff)
        entries = [e for e in entries if e["path"] != CITATION] + [entry(CITATION, cff)]
    if (kit / CROISSANT).is_file():
        croissant = write_croissant(document, entries, entry("provenance.json", (kit / "provenance.json").read_bytes()), FolderKit(kit))
        (kit / CROISSANT).write_bytes(croissant)
        entries.append(entry(CROISSANT, croissant))
    (kit / "index.json").write_bytes(index_bytes(index["kit"], entries, entry("provenance.json", (kit / "provenance.json").read_bytes())))


def edit_provenance(kit: Path, change: Any) -> None:
    """provenance.json loaded, changed by ``change``, and written in kitbuild's own layout."""
    from kitbuild.jsonfile import dump_json

    document = orjson.loads((kit / "provenance.json").read_bytes())
    change(document)
    (kit / "provenance.json").write_bytes(dump_json(document))
