"""What a build must never publish: every private string the config names, in every form a record
may print it.

The config names source paths, map keys and the machine and person names rules rewrite. A record
may print a machine by its short name (``gpu07``) where the config names its full one
(``gpu07.lab.example.org``), and a path names its owner (``/home/ada/...``, ``/scratch/u7/...``):
both forms are private too, so the leak gate looks for them as well.
"""

from __future__ import annotations

import re

from kitbuild.config import Config

# Mounts under which the folder after the mount is a person's (or a project's) name.
_OWNED = ("home", "Users", "scratch", "work", "nfs", "gpfs", "lustre", "data", "srv", "mnt", "net")
_OWNER = re.compile(r"^/(?:" + "|".join(_OWNED) + r")/([^/]+)")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
# Too short to be told from ordinary text: a name of fewer characters is not looked for alone.
_SHORTEST = 3


def private_strings(config: Config) -> dict[str, str]:
    """Every private string of ``config`` with a description that names no private value."""
    private = dict(config.private_strings())
    for text, what in list(private.items()):
        if "/" not in text and "\\" not in text and "." in text:
            short = text.split(".", 1)[0]
            if len(short) >= _SHORTEST and _NAME.match(short):
                private.setdefault(short, f"the short form of {what}")
        m = _OWNER.match(text)
        if m and len(m.group(1)) >= _SHORTEST and _NAME.match(m.group(1)):
            private.setdefault(m.group(1), f"the owner's name in {what}")
    return private
