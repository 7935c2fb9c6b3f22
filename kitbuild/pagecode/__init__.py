"""The built-in page templates, compiled ahead of time.

Compiling templates/README.md.j2 and index.html.j2 (lexing, parsing, generating Python) took
about 40 ms of CPU on every build and verify: on verify's path, time taken from the workers
hashing a kit's files. The Python that jinja2 generates for each is kept here, one module per
template, written by ``python -m kitbuild.pagecode`` and held current by tests/pagecode_test.py;
Python keeps its bytecode as for any module.

A module is used only while it is what compiling would give: under the jinja2 version that
generated it, for template bytes with the digest it was generated from, and for an environment
whose settings that shape the code (delimiters, whitespace handling, autoescaping of the name,
extensions) are those it was generated under; all three are checked on each use, so an edited
template or environment is compiled afresh. The environment is the one kitbuild.pages builds, so
the sandbox and the filters apply as to a template compiled on the spot. A kit's own templates
are always compiled from their text.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
from typing import Any, MutableMapping

import jinja2

from kitbuild.pagecode import manifest
from kitbuild.resources import templates_dir

__all__ = ["CompiledLoader", "module_name", "settings"]


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


class CompiledLoader(jinja2.BaseLoader):
    """Loads a built-in template from its module; any other name, or one whose module is not
    current, is not found here (a ChoiceLoader then asks the next loader, which compiles it)."""

    def load(self, environment: jinja2.Environment, name: str, globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        # (name -> (sha256, settings)) as the manifest records it; read at each use, so that a
        # manifest from an older layout only turns the compiled templates off.
        recorded = getattr(manifest, "TEMPLATES", {}).get(name)
        if not isinstance(recorded, tuple) or jinja2.__version__ != getattr(manifest, "JINJA2", None) or settings(environment, name) != recorded[1]:
            raise jinja2.TemplateNotFound(name)
        digest = recorded[0]
        try:
            data = (templates_dir() / name).read_bytes()
        except OSError:
            raise jinja2.TemplateNotFound(name) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise jinja2.TemplateNotFound(name)
        # The module's code object, from its cached bytecode where Python keeps one.
        spec = importlib.util.find_spec(module_name(name))
        if spec is None or not isinstance(spec.loader, importlib.abc.InspectLoader):
            raise jinja2.TemplateNotFound(name)
        code = spec.loader.get_code(spec.name)
        if code is None:
            raise jinja2.TemplateNotFound(name)
        # Run in a fresh namespace per environment, as jinja2's BaseLoader runs a template's
        # code: its functions read the environment from their module's globals.
        return environment.template_class.from_code(environment, code, globals if globals is not None else {})
