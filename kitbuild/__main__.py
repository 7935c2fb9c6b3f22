"""``python -m kitbuild``, and the ``kitbuild`` command installed with the package.

The command line's modules (typer, rich, the commands) take about a fifth of a second to load.
They are loaded from here, a module that loads in a few milliseconds, so that Ctrl-C while they
load ends as Ctrl-C in a command does: one line and status 130, not the interpreter's traceback.
"""

from __future__ import annotations

import sys

from kitbuild.errors import EXIT_INTERRUPTED


def main() -> None:
    try:
        from kitbuild.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("\nkitbuild: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    run()


if __name__ == "__main__":
    main()
