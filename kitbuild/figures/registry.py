"""Which recounts exist: the built-ins, listed by hand, and those installed packages add.

A package adds a recount by naming a :class:`~kitbuild.figures.recount.Recount` subclass (or
instance) in the ``kitbuild.recounts`` entry-point group, under the recount's name::

    [project.entry-points."kitbuild.recounts"]
    ndcg_at_k = "mypkg.recounts:NdcgAtK"

A kit never brings code: a figure can only name a recount that is installed where the kit is
built or verified. A plugin cannot replace a built-in.
"""

from __future__ import annotations

import functools
from typing import Mapping

from kitbuild.figures.at_k import AnyAtK, EveryAtK
from kitbuild.figures.count import Count
from kitbuild.figures.errors import FigureSpecError
from kitbuild.figures.group_by import GroupBy
from kitbuild.figures.holm import Holm
from kitbuild.figures.mcnemar import McNemarExact
from kitbuild.figures.read import Read
from kitbuild.figures.recount import Recount
from kitbuild.figures.rrf import Rrf
from kitbuild.schema import nearest

ENTRY_POINT_GROUP = "kitbuild.recounts"

BUILTIN_RECOUNTS: Mapping[str, Recount] = {
    recount.name: recount
    for recount in (Read(), Count(), EveryAtK(), AnyAtK(), GroupBy(), McNemarExact(), Holm(), Rrf())
}


def _load(entry) -> Recount:  # type: ignore[no-untyped-def]
    try:
        loaded = entry.load()
    except Exception as exc:  # a broken plugin must not take the built-ins down with it
        raise FigureSpecError(f"the recount {entry.name!r} (entry point {entry.value}) cannot be loaded: {type(exc).__name__}: {exc}") from None
    recount = loaded() if isinstance(loaded, type) else loaded
    if not isinstance(recount, Recount) or recount.name != entry.name:
        raise FigureSpecError(
            f"the entry point {entry.name!r} ({entry.value}) must name a kitbuild.figures.Recount whose name is {entry.name!r}"
        )
    return recount


@functools.lru_cache(maxsize=1)
def _plugin_entries() -> tuple:  # type: ignore[type-arg]
    # Imported here: importlib.metadata (and the email package it brings) cost every command
    # 5 ms of start-up, and only a kit whose figure names no built-in recount needs it.
    from importlib.metadata import entry_points

    return tuple(sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name))


def recount(name: str) -> Recount:
    """The recount called ``name``: a built-in, or one an installed package adds.

    Plugins are loaded only when a figure names them, so a broken plugin affects only the kits
    that use it.
    """
    if name in BUILTIN_RECOUNTS:
        return BUILTIN_RECOUNTS[name]
    for entry in _plugin_entries():
        if entry.name == name:
            return _load(entry)
    known = known_recounts()
    near = nearest(name, known)
    maybe = f"; did you mean {near!r}? The" if near else "; the"
    raise FigureSpecError(f"no such recount: {name!r}{maybe} recounts here are: {', '.join(known)}")


def known_recounts() -> list[str]:
    """Every recount name available here, built-ins first."""
    plugins = [e.name for e in _plugin_entries() if e.name not in BUILTIN_RECOUNTS]
    return [*BUILTIN_RECOUNTS, *plugins]
