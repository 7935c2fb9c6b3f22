"""The (path, digest) pairs a JSON document or an NDJSON record states.

A record that says ``{"path": "records/a.json", "sha256": "<64 hex>"}`` claims the digest of a
file; when that file is in the kit, verify checks the claim against its copy (KB401). The
observer (:mod:`kitbuild.observe`) reads the pairs of the records that print a digest and name
a kit path; this module says what a pair is.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from kitbuild.digests import DIGEST_LENGTH, PREFIX
from kitbuild.schema import key_path

__all__ = ["json_pairs"]

_DIGEST_VALUE = re.compile(r"(?:sha256:)?([0-9A-Fa-f]{64})")
_PATH_KEYS = {"path", "file", "filename", "file_path", "filepath", "name_path"}
_DIGEST_KEYS = {"sha256", "digest", "checksum", "hash"}


def _key_kind(key: str) -> tuple[bool, bool]:
    """Whether ``key`` names a path (``path``, ``file``, ``*_path``...), and whether a digest."""
    kind = _KINDS.get(key)
    if kind is None:
        k = key.lower()
        kind = (k in _PATH_KEYS or k.endswith("_path")), (k in _DIGEST_KEYS or k.endswith("sha256") or k.endswith("_digest"))
        if len(_KINDS) < 4096:  # records repeat a few keys; a hostile one may hold a million
            _KINDS[key] = kind
    return kind


_KINDS: dict[str, tuple[bool, bool]] = {}
# A digest as a value: 64 hex digits, or 71 with 'sha256:'.
_DIGEST_LENGTHS = frozenset((DIGEST_LENGTH, DIGEST_LENGTH + len(PREFIX)))


def _normal(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def json_pairs(document: Any, paths: frozenset[str], placeholders: tuple[str, ...]) -> Iterator[tuple[str, str, str]]:
    """(key path, kit path, digest said) for each digest ``document`` pairs with a kit path.

    A pair is an object with exactly one path-like field and one digest-like field (``{"path":
    ..., "sha256": ...}``), or a mapping entry from a kit path to a digest. A pair that says a
    placeholder always holds and is left out. The walk keeps its own stack: a record nested a
    thousand deep must not exhaust Python's recursion. It runs on every record of a kit whose
    records cite each other, so the common case (a string that is no digest) is kept short.
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while stack:
        where, value = stack.pop()
        if type(value) is dict:
            path_keys: list[str] = []
            digest_keys: list[tuple[str, str]] = []
            entries: list[tuple[str, str, str]] = []
            inner: list[tuple[str, Any]] = []
            for k, v in value.items():
                if type(v) is str:
                    is_path, is_digest = _key_kind(k)
                    if is_path:
                        path_keys.append(k)
                    if v in placeholders:
                        said = v
                    elif len(v) in _DIGEST_LENGTHS and (m := _DIGEST_VALUE.fullmatch(v)) is not None:
                        said = m.group(1).lower()
                    else:
                        continue
                    if is_digest:
                        digest_keys.append((k, said))
                    if _normal(k) in paths:
                        entries.append((k, _normal(k), said))
                elif type(v) is dict or type(v) is list:
                    inner.append((k, v))
            if len(path_keys) == 1 and len(digest_keys) == 1:
                target = _normal(value[path_keys[0]])
                key, said = digest_keys[0]
                if target in paths and said not in placeholders:
                    yield _key_path((*where, key)), target, said
            for k, target, said in entries:
                if said not in placeholders:
                    yield _key_path((*where, k)), target, said
            stack.extend(((*where, k), v) for k, v in reversed(inner))
        elif type(value) is list:
            stack.extend(((*where, i), v) for i, v in reversed(list(enumerate(value))) if type(v) is dict or type(v) is list)


def _key_path(steps: tuple[str | int, ...]) -> str:
    text = _KEY_PATHS.get(steps)
    if text is None:
        text = key_path(list(steps))
        if len(_KEY_PATHS) < 4096:
            _KEY_PATHS[steps] = text
    return text


_KEY_PATHS: dict[tuple[str | int, ...], str] = {}
