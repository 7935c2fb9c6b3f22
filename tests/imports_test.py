"""The shape of the package, read from its source: imports go one way, only the command line
imports typer, and no module outgrows what a reader can hold in mind (DESIGN.md, "Rooms").

Every import statement counts, wherever it is written: at the top of a module, inside a function
(run when the function first runs), and under ``if TYPE_CHECKING:`` (never run, but a circle all
the same for whoever reads the code, and one a refactoring would turn into a run-time one).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import kitbuild

PACKAGE = Path(kitbuild.__file__).resolve().parent
MAX_LINES = 500

# Modules over MAX_LINES today, being split by the lead. Empty it as they are: the test fails on
# an entry that no longer exists or now fits, so the list only shrinks.
TOO_LONG_FOR_NOW: set[str] = set()

# Imports written only for type annotations that close a circle today, also being undone by the
# lead; the same rule: each must still be there, and still be type-only, or leave the list.
TYPE_ONLY_FOR_NOW: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    type_only: bool


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path) -> list[tuple[str, int, bool]]:
    """(dotted name imported, line, type-only) for every import statement in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    type_only_nodes: set[int] = set()
    for node in ast.walk(tree):
        if _type_checking_block(node):
            assert isinstance(node, ast.If)
            type_only_nodes.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        type_only = id(node) in type_only_nodes
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, type_only) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            # 'from a import b' imports a, and a.b when b is a module.
            found.append((base, node.lineno, type_only))
            found += [(f"{base}.{alias.name}", node.lineno, type_only) for alias in node.names]
    return found


def package_imports() -> list[Import]:
    """The imports between kitbuild's own modules (each resolved to the module it loads)."""
    known = modules()
    edges: list[Import] = []
    for name, path in known.items():
        for target, line, type_only in imports_of(name, path):
            while target and target not in known:
                target = target.rpartition(".")[0]  # an attribute of a module, or a compiled module
            # A module's own packages are imported before it, whatever it writes: not an edge.
            if not target or target == name or name.startswith(target + "."):
                continue
            edges.append(Import(name, target, line, type_only))
    return edges


def circles(edges: list[Import]) -> list[list[str]]:
    """Each set of modules that import one another round in a circle (Tarjan's components)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.importer, set()).add(e.imported)
        graph.setdefault(e.imported, set())
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in order:
            continue
        # Iterative, so the test itself has no depth to run out of.
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _shown(component: list[str], edges: list[Import]) -> str:
    inside = set(component)
    return "; ".join(
        f"{e.importer} -> {e.imported} (line {e.line}{', type only' if e.type_only else ''})"
        for e in edges
        if e.importer in inside and e.imported in inside
    )


def test_no_import_circles_in_kitbuild() -> None:
    edges = [e for e in package_imports() if (e.importer, e.imported) not in TYPE_ONLY_FOR_NOW or not e.type_only]
    found = circles(edges)
    assert not found, "import circles: " + " | ".join(_shown(c, edges) for c in found)


def test_the_circles_left_for_now_are_still_there_and_type_only() -> None:
    edges = package_imports()
    for importer, imported in sorted(TYPE_ONLY_FOR_NOW):
        between = [e for e in edges if (e.importer, e.imported) == (importer, imported)]
        assert between, f"{importer} no longer imports {imported}: take it out of TYPE_ONLY_FOR_NOW"
        assert all(e.type_only for e in between), f"{importer} imports {imported} at run time now"


def test_the_circle_finder_finds_one() -> None:
    # The check above is only as good as this: a circle through a function-level import is found.
    edges = [Import("a", "b", 1, False), Import("b", "c", 1, False), Import("c", "a", 9, False), Import("c", "d", 2, False)]
    assert circles(edges) == [["a", "b", "c"]]
    assert circles(edges[1:]) == []


def test_imports_inside_functions_and_under_type_checking_are_read(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n"
        "    from kitbuild.config import Config\n"
        "def late():\n"
        "    import kitbuild.cli\n"
    )
    path = tmp_path / "mod.py"
    path.write_text(source)
    found = imports_of("kitbuild.commands.mod", path)
    assert ("kitbuild.commands.sibling", 2, False) in found
    assert ("kitbuild.config.Config", 4, True) in found
    assert ("kitbuild.cli", 6, False) in found


def test_only_the_command_line_imports_typer() -> None:
    importers = sorted(
        name
        for name, path in modules().items()
        for target, _, _ in imports_of(name, path)
        if target.split(".")[0] in ("typer", "click")
    )
    assert set(importers) == {"kitbuild.cli"}, importers


def _too_long() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            found[path.relative_to(PACKAGE.parent).as_posix()] = lines
    return found


def test_no_new_module_over_500_lines() -> None:
    new = {name: n for name, n in _too_long().items() if name not in TOO_LONG_FOR_NOW}
    assert not new, f"over {MAX_LINES} lines: {new}; split the module by concept (STYLE.md)"


@pytest.mark.parametrize("name", sorted(TOO_LONG_FOR_NOW))
def test_the_modules_too_long_for_now_still_are(name: str) -> None:
    assert (PACKAGE.parent / name).is_file(), f"{name} is gone: take it out of TOO_LONG_FOR_NOW"
    assert name in _too_long(), f"{name} fits in {MAX_LINES} lines now: take it out of TOO_LONG_FOR_NOW"
