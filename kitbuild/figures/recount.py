"""The shape of a recount: a named, documented, schema-checked way to compute a figure.

A recount is code that ships in a Python package, never in a kit: a kit only names recounts and
gives them parameters, which are checked against the recount's JSON Schema before anything runs.
Other packages add recounts through the ``kitbuild.recounts`` entry-point group (see
``kitbuild.figures.registry``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kitbuild.figures.context import Context
from kitbuild.figures.value import FigureValue
from kitbuild.schema import load_schema


class Recount:
    """Base of every recount.

    Subclasses set ``name`` (the value of ``recount:``), ``summary`` (one line for the docs) and
    either ``schema`` (a JSON Schema of the figure's own keys) or, for built-ins, nothing: their
    schema is ``$defs/recounts/<name>`` in ``kitbuild/schemas/figures.schema.json``.
    ``rows_from`` says which key names the row file a row recount counts in, so that
    ``agrees_with`` and ``group_by`` work on it without knowing the recount.
    """

    name: str = ""
    summary: str = ""
    rows_from: str | None = None

    @property
    def schema(self) -> Mapping[str, Any]:
        """The JSON Schema of this recount's keys (the keys every figure has are checked apart)."""
        full = load_schema("figures")
        return {"$defs": full["$defs"], "$ref": f"#/$defs/recounts/{self.name}"}

    def references(self, spec: Mapping[str, Any]) -> Sequence[str]:
        """The other figures this one is computed from; they are computed first."""
        return ()

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str] | None:
        """The parts a figure of this recount has, when known before anything is counted (so an
        ``equals: figure.part`` is checked when kit.yaml is read); None when the kit's rows decide
        them, or the recount does not say."""
        return None

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        """The figure's value. Fail through ``ctx.fail(reason)``; never raise anything else."""
        raise NotImplementedError
