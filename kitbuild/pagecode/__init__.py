"""The built-in page templates, compiled ahead of time.

Compiling templates/README.md.j2 and index.html.j2 (lexing, parsing, generating Python) took
about 40 ms of CPU on every build and verify: on verify's path, time taken from the workers
hashing a kit's files. The Python that jinja2 generates for each is kept here, one module per
template, written by ``python -m kitbuild.pagecode`` and held current by tests/pagecode_test.py;
Python keeps its bytecode as for any module.

A module is used only for template bytes with the digest it was generated from (:func:`code_of`),
so an edited template is compiled afresh. Its code runs in one of two ways:

- :mod:`kitbuild.pagecode.plain` runs it without jinja2, on a runtime of its own that does just
  what this code asks of jinja2's, and refuses anything else (the pages are then left to jinja2).
  Importing jinja2 cost more CPU than rendering both pages of a kit of 2,000 files. The code is
  run whichever jinja2 is installed: it is the built-in pages' definition, so a kit built beside
  one jinja2 and verified beside another gets the same bytes from both.
- :class:`kitbuild.pagecode.loader.CompiledLoader` hands it to jinja2, under the jinja2 version that
  generated it and for an environment whose settings that shape the code (delimiters, whitespace
  handling, autoescaping of the name, extensions) are those it was generated under; both are
  checked on each use, so an edited environment or another jinja2 compiles the text afresh.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
from types import CodeType
from typing import TYPE_CHECKING

from kitbuild.mapped import hexdigest
from kitbuild.pagecode import manifest
from kitbuild.resources import templates_dir

if TYPE_CHECKING:
    import jinja2

__all__ = ["code_of", "module_name", "settings"]


def module_name(template: str) -> str:
    """The module holding ``template``'s code: README.md.j2 -> kitbuild.pagecode.compiled_readme_md."""
    stem = template.removesuffix(".j2").lower().replace(".", "_").replace("-", "_")
    return f"{__name__}.compiled_{stem}"


def settings(environment: jinja2.Environment, template: str) -> str:
    """The settings of ``environment`` that shape the code jinja2 generates for ``template``,
    besides the template's text and jinja2's version."""
    escape = environment.autoescape(template) if callable(environment.autoescape) else environment.autoescape
    return repr(
        (
            type(environment).__name__,
            environment.block_start_string,
            environment.block_end_string,
            environment.variable_start_string,
            environment.variable_end_string,
            environment.comment_start_string,
            environment.comment_end_string,
            environment.line_statement_prefix,
            environment.line_comment_prefix,
            environment.trim_blocks,
            environment.lstrip_blocks,
            environment.newline_sequence,
            environment.keep_trailing_newline,
            environment.optimized,
            environment.is_async,
            environment.finalize is not None,
            bool(escape),
            sorted(environment.extensions),
        )
    )


def recorded(template: str) -> tuple[str, str] | None:
    """(sha256 of the text, settings) as the manifest records them for ``template``; None for a
    template it does not hold. Read at each use, so that a manifest from an older layout only
    turns the compiled templates off."""
    entry = getattr(manifest, "TEMPLATES", {}).get(template)
    if not (isinstance(entry, tuple) and len(entry) == 2 and all(isinstance(e, str) for e in entry)):
        return None
    return entry


def code_of(template: str) -> CodeType | None:
    """The code of ``template``'s module, when the built-in template's text is still the one it
    was generated from; None otherwise (an edited template, a module or manifest missing)."""
    entry = recorded(template)
    if entry is None:
        return None
    try:
        data = (templates_dir() / template).read_bytes()
    except OSError:
        return None
    # The compiled hash, not hashlib's: importing hashlib (loading OpenSSL) cost verify's page
    # child, which renders while the workers hash, 3 of its 20 ms of CPU on workload B.
    if hexdigest(data) != entry[0]:
        return None
    # The module's code object, from its cached bytecode where Python keeps one.
    spec = importlib.util.find_spec(module_name(template))
    if spec is None or not isinstance(spec.loader, importlib.abc.InspectLoader):
        return None
    return spec.loader.get_code(spec.name)
