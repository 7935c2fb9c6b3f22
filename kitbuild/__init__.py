"""kitbuild: publish the records behind a benchmark result as a data kit a reader can verify.

The public API is small: :func:`build`, :func:`verify`, :func:`check` and the error base
:class:`KitbuildError`; the CLI (``kitbuild``) is a thin layer over them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kitbuild.errors import ConfigError, KitbuildError, LeakError, UnsafeRewriteError
from kitbuild.version import __version__

if TYPE_CHECKING:
    from kitbuild.commands.build import BuildReport, build
    from kitbuild.commands.check import check
    from kitbuild.commands.verify import verify

# The commands are imported when first used, not with the package: every CLI call imports
# the package, and the build's imports (jsonschema, jinja2, the figures) would cost each one
# a fifth of a second, which on a kit of small files is most of a verify.
_LAZY = {
    "build": "kitbuild.commands.build",
    "BuildReport": "kitbuild.commands.build",
    "verify": "kitbuild.commands.verify",
    "check": "kitbuild.commands.check",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kitbuild' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "BuildReport",
    "ConfigError",
    "KitbuildError",
    "LeakError",
    "UnsafeRewriteError",
    "__version__",
    "build",
    "check",
    "verify",
]
