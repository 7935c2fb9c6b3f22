"""Evaluating a ``figures:`` block: check it, order it, compute each figure, run its checks.

The order is the declaration order, except that a figure always comes after the figures it
references, so a McNemar figure can be declared before the two figures it pairs. Checks never
raise: they are recorded on each figure, so the build can stop on them (:func:`require_checks`)
and verify can report every one as a finding (:func:`failed_checks`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from fractions import Fraction
from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.errors import FigureCheckError, FigureError, FigureSpecError, Where, locate
from kitbuild.figures.files import KitFiles, KitReader
from kitbuild.figures.numbers import number_problem
from kitbuild.figures.recount import Recount
from kitbuild.figures.registry import BUILTIN_RECOUNTS
from kitbuild.figures.registry import recount as find_recount
from kitbuild.figures.value import FIRST_ROWS, Check, Difference, FigureValue
from kitbuild.schema import SchemaProblem, first_schema_error, first_schema_problem, key_path, load_schema, nearest

# Keys every figure may have, checked by the block schema; a recount's schema sees the rest.
COMMON_KEYS = ("recount", "about", "label", "format", "equals")
# Past this many figures a message suggests the nearest name and lists none: a kit.yaml with
# fifty figures lists them itself.
LISTED = 12
# Names a page could not write inside {{ }}: jinja2 would read them as syntax.
RESERVED_NAMES = frozenset({"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "for", "loop", "self"})
# Integers compare exactly; a value a file prints as a decimal is a float, compared to this
# relative tolerance so that an exact p-value equals a stored one written by another program.
RELATIVE_TOLERANCE = 1e-9

NAME = re.compile(r"[a-z][a-z0-9_]*")


def validate_figures(spec: Any, where: Where | None = None, prefix: Sequence[str | int] = ("figures",), *, parts: bool = False, key_where: Where | None = None, stored: bool = False) -> dict[str, Recount]:
    """Check a ``figures:`` block; return each figure's recount. Raises :class:`FigureSpecError`.

    ``where`` turns a key path (``['figures', 'x', 'k']``) into ``kit.yaml:LINE:COL``; ``prefix``
    is the block's own key path in its document. With ``parts`` (kit.yaml read for a build), an
    ``equals: figure.part`` must name a part that figure has; verify reports one that does not as
    the check it is (:func:`evaluate`), beside every other finding. ``key_where`` places a key
    itself (its value may start on a later line); without it, ``where`` does. ``stored``: a
    kit's own specs, whose numbers are held only to what keeps a recount safe (a build checked
    kit.yaml's to the full bounds when it loaded it: kitbuild.figures.numbers).
    """
    if isinstance(spec, dict):
        for position, name in enumerate(spec, 1):
            # The schema's own message would not say which key. A key that is not a name may be
            # anything (a pasted private path): it is shown by position, and line:col points at it.
            if not isinstance(name, str) or not NAME.fullmatch(name):
                place = where([*prefix, name]) if where else "kit.yaml"
                raise FigureSpecError(
                    f"{place}: {key_path(prefix)}[key #{position}]: cannot name a figure: use lower-case letters, digits and '_', starting with a letter"
                )
    error = first_schema_error(spec, load_schema("figures"))
    if error:
        path, why = error
        raise FigureSpecError(f"{locate(where, [*prefix, *path])}: {why}")
    recounts: dict[str, Recount] = {}
    for name, figure in spec.items():
        if name in RESERVED_NAMES:
            raise FigureSpecError(f"{locate(where, [*prefix, name])}: {name!r} cannot name a figure: pages read it as template syntax. Choose another name.")
        try:
            recount = find_recount(figure["recount"])
        except FigureSpecError as exc:
            raise FigureSpecError(f"{locate(where, [*prefix, name, 'recount'])}: {exc.message}") from None
        own = {key: value for key, value in figure.items() if key not in COMMON_KEYS}
        # First, as it says more than the schema's rule: .nan, .inf, 1e300 or 2.0 where a count goes.
        bad_number = number_problem(recount.name, figure, stored)
        if bad_number:
            raise FigureSpecError(f"{locate(where, [*prefix, name, *bad_number[0]])}: {bad_number[1]}")
        problem = first_schema_problem(own, dict(recount.schema))
        if problem:
            raise FigureSpecError(_schema_message(problem, recount, where, [*prefix, name], key_where or where))
        refs = [(key, ref) for key, ref in _references(recount, figure)]
        for key, ref in refs:
            if ref not in spec:
                raise FigureSpecError(f"{locate(where, [*prefix, name, key])}: no figure is called {ref!r}{_choices(ref, list(spec), 'figures')}")
        recounts[name] = recount
    for name, figure in spec.items() if parts else ():
        if "equals" in figure:
            _check_part(figure["equals"], spec, recounts, where, [*prefix, name, "equals"])
    _order(spec, recounts, where, prefix)
    return recounts


def stored_spec_problem(name: str, spec: Any) -> str | None:
    """What is wrong with the keys one figure's spec in a kit's provenance.json has, for the
    pages' derivations and tables, which read them (None: nothing). Only the keys it has: the
    pages describe a spec with keys missing as it is, and its references are not followed nor a
    recount this installation lacks looked for (verify's figures check, KB703, reports those)."""
    at: list[str | int] = ["figures", name]
    error = first_schema_error({name: spec}, _shape("figures"))
    if error:
        return f"{key_path(['figures', *error[0]])}: {error[1]}"
    recount = BUILTIN_RECOUNTS.get(spec.get("recount", ""))
    if recount is not None:
        own = {key: value for key, value in spec.items() if key not in COMMON_KEYS}
        error = first_schema_error(own, _shape("figures", recount.name))
        if error:
            return f"{key_path([*at, *error[0]])}: {error[1]}"
    bad_number = number_problem(str(spec.get("recount", "")), spec, stored=True)
    return f"{key_path([*at, *bad_number[0]])}: {bad_number[1]}" if bad_number else None


@functools.lru_cache(maxsize=None)
def _shape(schema: str, recount: str | None = None) -> dict[str, Any]:
    """A schema (a built-in recount's, with ``recount``) that checks the keys an object has,
    not which it must have: every ``required`` left out."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: strip(value) for key, value in node.items() if not (key == "required" and isinstance(value, list))}
        return [strip(item) for item in node] if isinstance(node, list) else node

    full = load_schema(schema)
    shaped: dict[str, Any] = strip(full if recount is None else {"$defs": full["$defs"], "$ref": f"#/$defs/recounts/{recount}"})
    return shaped


def _choices(typed: str, names: Sequence[str], what: str) -> str:
    """``; did you mean 'x'?``, and the names there are when they are few."""
    near = nearest(typed, names)
    maybe = f"; did you mean {near!r}?" if near else ""
    if len(names) <= LISTED:
        return f"{maybe} The {what} are: {', '.join(sorted(names)) or '(none)'}" if near else f"; the {what} are: {', '.join(sorted(names)) or '(none)'}"
    return maybe or f"; none of the {len(names)} {what} is near it"


def _schema_message(problem: SchemaProblem, recount: Recount, where: Where | None, at: list[str | int], key_where: Where | None) -> str:
    """A figure's keys that do not fit its recount's schema; a key it does not know is placed at
    its own line, and the keys every figure has are among those it may have meant."""
    if problem.unknown_key is None:
        return f"{locate(where, [*at, *problem.path])}: {problem.message}"
    key = problem.unknown_key
    allowed = sorted({*problem.allowed, *(COMMON_KEYS if not problem.path else ())})
    place = key_where([*at, *problem.path, key]) if key_where else "kit.yaml"
    # A key that does not read as a name may be anything (a pasted private path): line:col point at it.
    shown = f"{key_path([*at, *problem.path, key])}: unknown key" if NAME.fullmatch(key) else f"{key_path([*at, *problem.path])}: unknown key (shown at its line)"
    near = nearest(key, allowed)
    maybe = f"; did you mean {near!r}?" if near else "."
    return f"{place}: {shown}{maybe} The keys allowed here are: {', '.join(allowed)} (recount {recount.name!r}; see docs/figures.md)"


def _check_part(reference: str, spec: Mapping[str, Any], recounts: Mapping[str, Recount], where: Where | None, at: list[str | int]) -> None:
    """``equals: figure.part``: the part is one that figure has, where its recount says which
    before anything is counted (parts a kit's rows decide are checked when they are counted)."""
    figure, *parts = reference.split(".")
    if not parts or figure not in recounts:
        return
    known = recounts[figure].parts(spec[figure])
    if known is None or parts[0] in known:
        return
    near = nearest(parts[0], known)
    listed = f"its parts are: {', '.join(known)}" if known else "it has no parts: compare with the figure itself"
    has = f"; did you mean {near!r}? {listed[0].upper()}{listed[1:]}" if near else f"; {listed}"
    raise FigureSpecError(f"{locate(where, at)}: figure {figure!r} has no part {parts[0]!r}{has}")


def _references(recount: Recount, figure: Mapping[str, Any]) -> list[tuple[str, str]]:
    # The key each reference sits under, for error messages; a recount lists names only, so
    # find which of its keys holds each.
    out = []
    for ref in recount.references(figure):
        key = next((k for k, v in figure.items() if v == ref or (isinstance(v, list) and ref in v)), "recount")
        out.append((key, ref))
    if "equals" in figure:
        # 'equals' may name a part: 'family_holm.f1_vs_a0' checks against that figure's part.
        out.append(("equals", figure["equals"].split(".", 1)[0]))
    return out


def _order(spec: Mapping[str, Any], recounts: Mapping[str, Recount], where: Where | None, prefix: Sequence[str | int]) -> list[str]:
    """The figures in declaration order, each after those it is computed from.

    A depth-first walk with its own stack: a chain of thousands of figures, each computed from
    the next (a kit.yaml written by a program, or a hostile provenance.json in verify), would
    otherwise end in a RecursionError.
    """
    order: list[str] = []
    state: dict[str, str] = {}
    for start in spec:
        if state.get(start) == "done":
            continue
        state[start] = "open"
        trail = [start]
        work = [iter([ref for key, ref in _references(recounts[start], spec[start]) if key != "equals"])]
        while work:
            # Checks ('equals') run after every figure is computed, so they never order.
            ref = next(work[-1], None)
            if ref is None:
                work.pop()
                name = trail.pop()
                state[name] = "done"
                order.append(name)
                continue
            if state.get(ref) == "done":
                continue
            if state.get(ref) == "open":
                circle = trail[trail.index(ref):] + [ref]
                shown = " -> ".join(circle) if len(circle) <= 12 else " -> ".join([*circle[:6], "...", *circle[-6:]])
                raise FigureSpecError(f"{locate(where, [*prefix, circle[0]])}: the figures {shown} refer to each other in a circle")
            state[ref] = "open"
            trail.append(ref)
            work.append(iter([r for key, r in _references(recounts[ref], spec[ref]) if key != "equals"]))
    return order


def evaluate(
    spec: Mapping[str, Any],
    kit: KitFiles,
    *,
    where: Where | None = None,
    errors: list[FigureError] | None = None,
) -> dict[str, FigureValue]:
    """Every figure of ``spec`` computed from ``kit``, in declaration order.

    A figure that cannot be computed raises :class:`FigureError` naming it; with ``errors`` given
    (verify's way), the error is appended there instead, the figures that need it are skipped
    with their own error, and the rest are still computed.
    """
    recounts = validate_figures(spec, where, stored=True)
    reader = KitReader(kit)
    computed: dict[str, FigureValue] = {}
    for name in _order(spec, recounts, where, ("figures",)):
        figure, recount = spec[name], recounts[name]
        try:
            missing = [ref for key, ref in _references(recount, figure) if key != "equals" and ref not in computed]
            if missing:
                raise FigureError(name, f"it is computed from {missing[0]!r}, which cannot be computed")
            ctx = Context(name, figure, reader, computed)
            value = _finish(name, figure, recount, recount.compute(figure, ctx), ctx)
        except FigureError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        computed[name] = value
    for name, value in list(computed.items()):
        other = spec[name].get("equals")
        if other is None or other.split(".", 1)[0] not in computed:
            continue
        target = _target(other, computed)
        if target is None:
            check = Check(name, "equals", other, False, expected="not a part of that figure", found=_shown(value))
            computed[name] = dataclasses.replace(value, checks=(*value.checks, check))
        else:
            computed[name] = dataclasses.replace(value, checks=(*value.checks, _equals(name, value, other, target)))
    return {name: computed[name] for name in spec if name in computed}


def _finish(name: str, figure: Mapping[str, Any], recount: Recount, value: FigureValue, ctx: Context) -> FigureValue:
    rows = figure.get(recount.rows_from) if recount.rows_from else None
    key = figure.get("key", DEFAULT_KEY) if rows else None
    value = dataclasses.replace(
        value,
        name=name,
        recount=recount.name,
        format=figure.get("format", value.format),
        rows=rows,
        key=key,
    )
    if "agrees_with" in figure:
        value = dataclasses.replace(value, checks=(*value.checks, _agrees(name, figure["agrees_with"], value, ctx)))
    return value


def _agrees(name: str, pointer: str, value: FigureValue, ctx: Context) -> Check:
    if value.outcomes is None or value.rows is None or value.key is None:
        ctx.fail("agrees_with needs a recount that counts rows")
    rows, keyed = ctx.keyed(value.rows, value.key)
    by_key = {entry.key: entry.row for entry in keyed}
    differences = []
    for key, outcome in value.outcomes.items():
        stored: Any = ctx.flag(rows, by_key[key], pointer) if isinstance(outcome, bool) else ctx.field(rows, by_key[key], pointer)
        if stored != outcome or isinstance(stored, bool) != isinstance(outcome, bool):
            differences.append(Difference(key, outcome, stored))
    return Check(name, "agrees_with", pointer, not differences, len(differences), tuple(differences[:FIRST_ROWS]))


def same_value(a: Any, b: Any) -> bool:
    """Whether two figure values are equal, as ``equals`` means it."""
    numbers = (int, float, Fraction)
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, numbers) or not isinstance(b, numbers):
        return type(a) is type(b) and a == b
    if all(isinstance(v, int) or (isinstance(v, Fraction) and v.denominator == 1) for v in (a, b)):
        return a == b
    fa, fb = float(a), float(b)
    return abs(fa - fb) <= RELATIVE_TOLERANCE * max(1.0, abs(fa), abs(fb))


def _target(reference: str, computed: Mapping[str, FigureValue]) -> FigureValue | None:
    # None when the figure could not be computed (its own error says so) or has no such part.
    figure, *parts = reference.split(".")
    value = computed.get(figure)
    for part in parts:
        value = value.parts.get(part) if value is not None else None
    return value


def _equals(name: str, value: FigureValue, other_name: str, other: FigureValue) -> Check:
    # 'of' is compared only when both say it: a stored count often comes without its denominator.
    holds = same_value(value.value, other.value) and (value.of is None or other.of is None or value.of == other.of)
    return Check(name, "equals", other_name, holds, expected=_shown(other), found=_shown(value))


def _shown(value: FigureValue) -> str:
    return value.text() + (f" of {value.of_text()}" if value.of is not None else "")


def failed_checks(values: Mapping[str, FigureValue]) -> list[Check]:
    """Every check that does not hold, figure by figure in declaration order."""
    return [check for value in values.values() for check in value.checks if not check.holds]


def require_checks(values: Mapping[str, FigureValue]) -> None:
    """Raise :class:`FigureCheckError` listing every check that does not hold (the build's way)."""
    failed = failed_checks(values)
    if failed:
        raise FigureCheckError([check.message() for check in failed])
