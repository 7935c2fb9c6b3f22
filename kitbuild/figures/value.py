"""What a figure is once counted: a value, what it counts ``of``, its per-row outcomes, its text.

A figure's text is fixed by its format, never by the template, so the page, provenance.json and
verify all print a number the same way, and the same way the reference kit's README does:
counts with thousands separators (``54,802``), a gain with its sign (``+9``), a p-value to four
decimals (``0.1877``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import orjson

FORMATS = ("count", "plain", "signed", "p", "text")
# Checks report at most this many differing rows by name: enough to find the pattern, short
# enough to read in a CI log.
FIRST_ROWS = 5
_P_FLOOR = Fraction(1, 10_000)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, Fraction)) and not isinstance(value, bool)


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    if isinstance(value, Fraction):
        value = int(value) if value.denominator == 1 else float(value)
    if isinstance(value, float):
        # The shortest text that reads back as the same float, as JSON files print it.
        return orjson.dumps(value).decode()
    return str(value)


def format_p(p: Fraction | float) -> str:
    """A p-value as the reference README prints it: four decimals, rounded half to even.

    Rounding is done on the exact value (a Fraction, or the float's exact binary value), so the
    text never depends on how a float happened to print. Below 0.0001 it reads ``<0.0001``; a
    p-value of exactly 1 (a Holm cap, or no discordant rows) reads ``1``.
    """
    exact = Fraction(p)
    if exact >= 1:
        return "1"
    if exact < _P_FLOOR:
        return "<0.0001"
    return _round4(exact)


def _round4(exact: Fraction) -> str:
    tenths = exact * 10_000
    floor = math.floor(tenths)
    rest = tenths - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2):
        floor += 1
    return f"{floor // 10_000}.{floor % 10_000:04d}"


def format_value(value: Any, fmt: str) -> str:
    """``value`` as text in format ``fmt`` (one of :data:`FORMATS`)."""
    if value is None:
        return "null"
    if fmt == "text" or not _number(value):
        return _plain(value)
    if fmt == "p":
        return format_p(value if isinstance(value, Fraction) else Fraction(value))
    if fmt == "signed":
        text = format_value(value, "count")
        return text if text.startswith("-") or text == "0" else "+" + text
    if fmt == "count":
        if isinstance(value, Fraction) and value.denominator == 1:
            value = int(value)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)
        if isinstance(value, int):
            return f"{value:,}"
    return _plain(value)


def json_value(value: Any) -> Any:
    """``value`` as provenance.json stores it: exact integers, floats, strings, booleans."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value


@dataclass(frozen=True)
class Difference:
    """One row where a recount and a stored outcome (or two recounts) disagree."""

    key: str
    recounted: Any
    stored: Any


@dataclass(frozen=True)
class Check:
    """The result of one ``agrees_with`` or ``equals`` check on a figure."""

    figure: str
    kind: str  # 'agrees_with' or 'equals'
    target: str  # the pointer, or the other figure's name
    holds: bool
    differing: int = 0  # rows that differ (agrees_with)
    first: tuple[Difference, ...] = ()
    expected: str | None = None  # equals: the other figure's text
    found: str | None = None  # equals: this figure's text

    def message(self) -> str:
        """One line saying what does not hold, naming the first rows that differ."""
        if self.holds:
            return f"{self.figure}: {self.kind} {self.target} holds"
        if self.kind == "equals":
            return f"{self.figure}: equals {self.target} does not hold: {self.figure} is {self.found}, {self.target} is {self.expected}"
        rows = "; ".join(f"{d.key} (recount {_plain(d.recounted)}, stored {_plain(d.stored)})" for d in self.first)
        more = f"; and {self.differing - len(self.first)} more" if self.differing > len(self.first) else ""
        noun = "row differs" if self.differing == 1 else "rows differ"
        return f"{self.figure}: agrees_with {self.target} does not hold: {self.differing} {noun}: {rows}{more}"


@dataclass(frozen=True)
class FigureValue:
    """One computed figure.

    ``value`` is the number (or text) the page prints; ``of`` what it counts out of, if anything;
    ``outcomes`` maps each row key to that row's outcome for a row recount (True/False, or an
    integer such as McNemar's -1/0/+1), in file order; ``parts`` are named sub-figures (McNemar's
    discordant counts, a Holm family's adjusted p-values, a group_by table's groups).
    """

    value: Any
    format: str = "count"
    of: int | None = None
    outcomes: Mapping[str, Any] | None = None
    parts: Mapping[str, "FigureValue"] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    name: str = ""
    recount: str = ""
    rows: str | None = None  # a row recount's row file and key pointer, for group_by and agrees_with
    key: str | None = None

    def text(self) -> str:
        """The value as the page prints it."""
        return format_value(self.value, self.format)

    def of_text(self) -> str:
        """``of`` as the page prints it."""
        return "" if self.of is None else format_value(self.of, "count")

    def __str__(self) -> str:
        return self.text()

    def record(self) -> dict[str, Any]:
        """The figure's value as provenance.json stores it (no per-row outcomes: they recount)."""
        out: dict[str, Any] = {"value": json_value(self.value), "text": self.text()}
        if self.of is not None:
            out["of"] = {"value": self.of, "text": self.of_text()}
        if self.parts:
            out["parts"] = {name: part.record() for name, part in self.parts.items()}
        return out
