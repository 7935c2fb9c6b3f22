"""Figures: numbers a page prints, declared once in kit.yaml, computed from the kit's own files.

The core API::

    values = evaluate(spec, FolderFiles(kit_dir))   # name -> FigureValue; FigureError if one cannot be computed
    require_checks(values)                           # FigureCheckError if an agrees_with / equals fails
    records(values)                                  # what provenance.json stores under 'figures'
    views(records)                                   # what a page template prints: {{ name }}, {{ name.of }}

See docs/figures.md for the keys of each recount.
"""

from kitbuild.figures.errors import FigureCheckError, FigureError, FigureSpecError
from kitbuild.figures.evaluate import evaluate, failed_checks, require_checks, same_value, validate_figures
from kitbuild.figures.files import FolderFiles, KitFiles, MemoryFiles, RecordFiles
from kitbuild.figures.recount import Recount
from kitbuild.figures.registry import BUILTIN_RECOUNTS, ENTRY_POINT_GROUP, known_recounts, recount
from kitbuild.figures.render import FigureView, records, render_text, views
from kitbuild.figures.table import TableProblem, render_figures_table, table_problems, validate_figures_table
from kitbuild.figures.value import Check, Difference, FigureValue, format_p, format_value

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
    "recount",
    "render_figures_table",
    "render_text",
    "require_checks",
    "same_value",
    "table_problems",
    "validate_figures",
    "validate_figures_table",
    "views",
]
