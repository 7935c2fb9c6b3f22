"""A cache of compiled page templates, in memory, through jinja2's own bytecode cache."""

from __future__ import annotations

import hashlib
import types

import jinja2
import jinja2.bccache


class CompiledTemplates(jinja2.BytecodeCache):
    """The pages' templates as jinja2 compiled them, kept for the next rendering in this process:
    compiling both pages took two thirds of a small kit's build and verify. One for each name and
    file (so no more than the templates kitbuild can load), used only for the same source: jinja2
    compares its checksum."""

    def __init__(self) -> None:
        self.compiled: dict[str, tuple[str, types.CodeType]] = {}

    def get_source_checksum(self, source: str) -> str:
        # SHA-256, not jinja2's SHA-1: a kit's template is a stranger's text, and two texts of
        # one SHA-1 can be made.
        return hashlib.sha256(source.encode("utf-8")).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        checksum, code = self.compiled.get(bucket.key, ("", None))
        if code is not None and checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is not None:
            self.compiled[bucket.key] = (bucket.checksum, bucket.code)


# Shared by every pages environment (kitbuild.pages.sandbox): one class, one set of options, so
# they all compile a template into the same code.
COMPILED = CompiledTemplates()
