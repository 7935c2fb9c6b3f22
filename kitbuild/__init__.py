"""kitbuild: publish the records behind a benchmark result as a data kit a reader can verify.

The public API is small: :func:`build` and the error base :class:`KitbuildError`; the CLI
(``kitbuild``) is a thin layer over it.
"""

from kitbuild.commands.build import BuildReport, build
from kitbuild.errors import ConfigError, KitbuildError, LeakError, UnsafeRewriteError
from kitbuild.version import __version__

__all__ = [
    "BuildReport",
    "ConfigError",
    "KitbuildError",
    "LeakError",
    "UnsafeRewriteError",
    "__version__",
    "build",
]
