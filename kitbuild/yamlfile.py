"""Reading YAML the way kitbuild's error messages need it.

Values are loaded with the safe loader, except that dates stay strings (``date: 2026-11-09`` must
reach the kit exactly as typed, not as a ``datetime.date``). The composed node tree is kept so
that a key path such as ``rules[1].with.names`` can be turned into the line and column where it
was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

from kitbuild.errors import ConfigError


def _without_timestamps(base: type[Any]) -> type[Any]:
    """``base`` without the timestamp resolver, so dates load as the strings typed."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in entries if tag != "tag:yaml.org,2002:timestamp"]
        for first, entries in base.yaml_implicit_resolvers.items()
    }
    return type(base.__name__ + "WithoutDates", (base,), {"yaml_implicit_resolvers": resolvers})


_PURE = _without_timestamps(yaml.SafeLoader)
# libyaml's parser where PyYAML was built with it: a config that maps a thousand box names
# loaded in 0.24 s through the pure-Python parser, on the critical path of every build. Its
# error messages are worded otherwise, so a file that does not parse is read again by the
# pure-Python parser, whose message is the one kitbuild reports on every machine.
_FAST = _without_timestamps(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else _PURE


def _parse(text: str, loader_class: type[Any]) -> tuple[Any, yaml.Node | None]:
    """The data and the node tree of ``text``, parsed once."""
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    finally:
        loader.dispose()


class YamlDocument:
    """A parsed YAML file: its data and where each value was written."""

    def __init__(self, label: str, data: Any, root: yaml.Node | None) -> None:
        self.label = label
        self.data = data
        self._root = root

    def position(self, path: Sequence[str | int]) -> tuple[int, int] | None:
        """The 1-based (line, column) of the deepest node on ``path`` that exists."""
        node = self._root
        found = None
        for step in path:
            if node is None:
                break
            found = node
            if isinstance(node, yaml.MappingNode):
                nxt = None
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(step):
                        nxt = value
                        break
                node = nxt
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                node = node.value[step]
            else:
                node = None
        if node is not None:
            found = node
        if found is None:
            return None
        return found.start_mark.line + 1, found.start_mark.column + 1

    def where(self, path: Sequence[str | int]) -> str:
        """``label:line:col`` for ``path``, or just ``label`` if it cannot be placed."""
        pos = self.position(path)
        return f"{self.label}:{pos[0]}:{pos[1]}" if pos else self.label


def load_yaml(path: Path, label: str) -> YamlDocument:
    """Parse ``path``; a syntax error becomes a :class:`ConfigError` with its line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{label}: no such file. Give the path of a kit config, or run 'kitbuild init' to write one.") from None
    except IsADirectoryError:
        raise ConfigError(f"{label}: is a folder, not a YAML file.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{label}: is not UTF-8 text (byte {exc.start}). Save it as UTF-8.") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot be read ({exc.strerror}).") from None
    try:
        try:
            data, root = _parse(text, _FAST)
        except yaml.YAMLError:
            if _FAST is _PURE:
                raise
            data, root = _parse(text, _PURE)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: the YAML does not parse: {problem}. Fix the syntax at that place.") from None
    return YamlDocument(label, data, root)
