"""The built-in templates' compiled code, handed to jinja2 (see :mod:`kitbuild.pagecode`)."""

from __future__ import annotations

from typing import Any, MutableMapping

import jinja2

from kitbuild.pagecode import code_of, manifest, recorded, settings


class CompiledLoader(jinja2.BaseLoader):
    """Loads a built-in template from its module; any other name, or one whose module is not
    current, is not found here (a ChoiceLoader then asks the next loader, which compiles it)."""

    def load(self, environment: jinja2.Environment, name: str, globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        entry = recorded(name)
        if entry is None or jinja2.__version__ != getattr(manifest, "JINJA2", None) or settings(environment, name) != entry[1]:
            raise jinja2.TemplateNotFound(name)
        code = code_of(name)
        if code is None:
            raise jinja2.TemplateNotFound(name)
        # Run in a fresh namespace per environment, as jinja2's BaseLoader runs a template's
        # code: its functions read the environment from their module's globals.
        return environment.template_class.from_code(environment, code, globals if globals is not None else {})
