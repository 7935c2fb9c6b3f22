"""What a build must never publish: every private string the config names, in every form a record
may print it.

The config names source paths, map keys and the machine and person names rules rewrite. A record
may print a machine by its short name (``gpu07``) where the config names its full one
(``gpu07.lab.example.org``), and a home or scratch path names its owner (``/home/ada/...``,
``/scratch/u7/...``): those forms are private too, so the leak gate looks for them as well.
"""

from __future__ import annotations

import re
from typing import Mapping

from kitbuild.config import Config
from kitbuild.errors import ConfigError

# Mounts under which the folder after the mount is a person's name. (/data, /srv, /work and the
# like hold project folders: "records" under /data is no one's name, and looking for it would stop
# every build on kitbuild's own pages.)
_OWNED = ("home", "Users", "scratch", "usr/home")  # (FreeBSD's home folders are under /usr/home)
# (and a Windows drive's Users folder, as a map key may name it: 'C:\\Users\\ada\\runs')
_OWNER = re.compile(r"^(?:/(?:" + "|".join(_OWNED) + r")/|[A-Za-z]:[\\/]Users[\\/])([^/\\]+)")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
# Too short to be told from ordinary text: a name of fewer characters is not looked for alone.
_SHORTEST = 3
# The longest private string or allow text the leak gate looks for (kitbuild.leaks keeps this much
# of a file around each match).
LONGEST = 512
_GENERIC = "a private string kit.yaml names"


def private_strings(config: Config) -> dict[str, str]:
    """Every private string of ``config`` with a description that names no private value.

    Raises :class:`ConfigError` for a private string or allow text too long to look for."""
    private = dict(config.private_strings())
    for text, what in list(private.items()):
        if "/" not in text and "\\" not in text and "." in text:
            short = text.split(".", 1)[0]
            if len(short) >= _SHORTEST and _NAME.match(short):
                private.setdefault(short, f"the short form of {what}")
        m = _OWNER.match(text)
        if m and len(m.group(1)) >= _SHORTEST and _NAME.match(m.group(1)):
            private.setdefault(m.group(1), f"the owner's name in {what}")
    for text, what in private.items():
        if len(text.encode("utf-8")) > LONGEST:
            raise ConfigError(f"{config.label}: {what}: is longer than {LONGEST} bytes, more than the leak gate looks for; shorten it (a path prefix or a name is enough).")
    for n, entry in enumerate(config.allow):
        if len(str(entry["text"]).encode("utf-8")) > LONGEST:
            raise ConfigError(f"{config.document.where(['allow', n, 'text'])}: allow[{n}].text: is longer than {LONGEST} bytes; allow the shortest text that covers the path.")
    return {text: safe(what, private) for text, what in private.items()}


def safe(text: str, private: Mapping[str, str]) -> str:
    """``text`` as a report may print it: a description or a kit path that holds a private
    string (a role named like a machine, a file named after one) is said generically."""
    folded = text.lower()
    if any(secret and secret.lower() in folded for secret in private):
        return _GENERIC
    return text
