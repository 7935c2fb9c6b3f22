"""Figures: numbers a page prints, declared once in kit.yaml, computed from the kit's own files.

The core API::

    values = evaluate(spec, FolderFiles(kit_dir))   # name -> FigureValue; FigureError if one cannot be computed
    require_checks(values)                           # FigureCheckError if an agrees_with / equals fails
    records(values)                                  # what provenance.json stores under 'figures'
    views(records)                                   # what a page template prints: {{ name }}, {{ name.of }}

See docs/figures.md for the keys of each recount.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kitbuild.figures.errors import FigureCheckError, FigureError, FigureSpecError
    from kitbuild.figures.evaluation import evaluate, failed_checks, require_checks, same_value, validate_figures
    from kitbuild.figures.files import FolderFiles, KitFiles, MemoryFiles, RecordFiles
    from kitbuild.figures.recount import Recount
    from kitbuild.figures.registry import BUILTIN_RECOUNTS, ENTRY_POINT_GROUP, known_recounts
    from kitbuild.figures.render import FigureView, records, render_text, views
    from kitbuild.figures.table import TableProblem, render_figures_table, table_problems, validate_figures_table
    from kitbuild.figures.value import Check, Difference, FigureValue, format_p, format_value

# Each name is imported from its module when first used: verify imports this package for the
# pages of every kit, and the recounts, their registry and their schemas (a tenth of a verify of
# a small kit) are needed only by a kit that declares figures. (A recount by name is
# kitbuild.figures.registry.recount: the package's own 'recount' is its module of that name.)
_LAZY: dict[str, str] = {
    **dict.fromkeys(("FigureCheckError", "FigureError", "FigureSpecError"), "kitbuild.figures.errors"),
    **dict.fromkeys(("evaluate", "failed_checks", "require_checks", "same_value", "validate_figures"), "kitbuild.figures.evaluation"),
    **dict.fromkeys(("FolderFiles", "KitFiles", "MemoryFiles", "RecordFiles"), "kitbuild.figures.files"),
    **dict.fromkeys(("Recount",), "kitbuild.figures.recount"),
    **dict.fromkeys(("BUILTIN_RECOUNTS", "ENTRY_POINT_GROUP", "known_recounts"), "kitbuild.figures.registry"),
    **dict.fromkeys(("FigureView", "records", "render_text", "views"), "kitbuild.figures.render"),
    **dict.fromkeys(("TableProblem", "render_figures_table", "table_problems", "validate_figures_table"), "kitbuild.figures.table"),
    **dict.fromkeys(("Check", "Difference", "FigureValue", "format_p", "format_value"), "kitbuild.figures.value"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kitbuild.figures' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "BUILTIN_RECOUNTS",
    "ENTRY_POINT_GROUP",
    "Check",
    "Difference",
    "FigureCheckError",
    "FigureError",
    "FigureSpecError",
    "FigureValue",
    "FigureView",
    "FolderFiles",
    "KitFiles",
    "MemoryFiles",
    "Recount",
    "RecordFiles",
    "TableProblem",
    "evaluate",
    "failed_checks",
    "format_p",
    "format_value",
    "known_recounts",
    "records",
    "render_figures_table",
    "render_text",
    "require_checks",
    "same_value",
    "table_problems",
    "validate_figures",
    "validate_figures_table",
    "views",
]
