"""Reading YAML the way kitbuild's error messages need it.

Values are loaded with the safe loader, except that dates stay strings (``date: 2026-11-09`` must
reach the kit exactly as typed, not as a ``datetime.date``). The composed node tree is kept so
that a key path such as ``rules[1].with.names`` can be turned into the line and column where it
was written.

A file is refused, with its line and column, before anything reads its values when it could only
hurt what comes after: collections nested deeper than :data:`MAX_DEPTH` (PyYAML composes by
recursion, and so do the schema checks after it: ten thousand ``[`` would end in a
RecursionError), an alias inside the value it names (a value that holds itself), and strings no
UTF-8 file can hold (a lone surrogate written as ``"\\udc80"``) or that no path or name may hold
(a NUL); and, with its key path, anything JSON cannot hold, which the schema checks after it
would fail on: a key that is not a string (``5:``, ``~:``, ``yes:``), a tag such as ``!!set`` or
``!!binary``, ``.nan`` and ``.inf``, an integer past 64 bits (or past Python's 4,300 digits).

Only a regular file of at most :data:`MAX_BYTES` is read: a FIFO would block, a device
(/dev/zero) would be read without end.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import yaml

from kitbuild.errors import ConfigError


def _without_timestamps(base: type[Any]) -> type[Any]:
    """``base`` without the timestamp resolver, so dates load as the strings typed."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in entries if tag != "tag:yaml.org,2002:timestamp"]
        for first, entries in base.yaml_implicit_resolvers.items()
    }
    return type(base.__name__ + "WithoutDates", (base,), {"yaml_implicit_resolvers": resolvers})


# A step of a key path: a list index, or a mapping key's text and its 1-based position.
_Step = tuple[str, int] | int

# A kit config of a thousand sources and rules is a few hundred KiB; past this, not a config.
MAX_BYTES = 4 * 2**20

# A kit config nests five or six levels, a figure's spec a few more; a rule file fewer.
MAX_DEPTH = 64

# How many values aliases may add to a file, over the ones written in it. The values are shared
# as loaded, but everything after the loader (the schema checks, a figure's evaluation) walks
# them one by one: nine lines of nested aliases are a billion values, and hours of work. A config
# that names a list twice adds its length once.
MAX_ALIASED = 100_000


class _Refused(yaml.YAMLError):
    """A YAML file that parses but is refused: ``mark`` is where, ``steps`` the key path to the
    value (None: not known), ``what`` the rest of the message."""

    def __init__(self, mark: Any, what: str, steps: list[_Step] | None = None) -> None:
        super().__init__(what)
        self.mark, self.what, self.steps = mark, what, steps


def _too_deep(mark: Any) -> _Refused:
    return _Refused(mark, f"is nested deeper than {MAX_DEPTH} levels here (a kit config needs a handful). Flatten the value, or fix the brackets that open it")


class _DepthLimited:
    """Stops PyYAML's recursive composer at :data:`MAX_DEPTH`, before Python's own limit."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        opens = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)  # type: ignore[attr-defined]
        if not opens:
            return super().compose_node(parent, index)  # type: ignore[misc]
        if self._depth >= MAX_DEPTH:
            raise _too_deep(self.peek_event().start_mark)  # type: ignore[attr-defined]
        self._depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1


_PURE = type("SafeLoaderWithoutDates", (_DepthLimited, _without_timestamps(yaml.SafeLoader)), {})
# libyaml's parser where PyYAML was built with it: a config that maps a thousand box names
# loaded in 0.24 s through the pure-Python parser, on the critical path of every build. Its
# error messages are worded otherwise, so a file that does not parse is read again by the
# pure-Python parser, whose message is the one kitbuild reports on every machine.
_FAST = _without_timestamps(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else _PURE


def _children(node: yaml.Node) -> Iterator[tuple[yaml.Node, _Step]]:
    """Each node directly inside ``node``, with the step of a key path that leads to it (a
    mapping's key is reached by its own name, as a message would name it)."""
    if isinstance(node, yaml.SequenceNode):
        yield from ((child, i) for i, child in enumerate(node.value))
    elif isinstance(node, yaml.MappingNode):
        for position, (key, value) in enumerate(node.value, 1):
            step = (key.value if isinstance(key, yaml.ScalarNode) else "", position)
            yield key, step
            yield value, step


def shown_path(steps: Sequence[_Step], public_keys: frozenset[str]) -> str:
    """``rules[0].with.map[key #2]``: a key the schema names is spelled out; any other (a private
    path in ``map``, a machine name in ``names``) is shown by its position, never by its text,
    as :func:`kitbuild.schema.public_key_path` shows it."""
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step[0] in public_keys:
            out += f".{step[0]}" if out else step[0]
        else:
            out += f"[key #{step[1]}]"
    return out or "(top level)"


def _check_nodes(root: yaml.Node) -> None:
    """Refuse what :data:`MAX_DEPTH` and the module's docstring refuse, walking each node once.

    Iterative, and linear in the nodes however aliases share them: a node's height (the
    collections nested in it) and its size (the values it stands for, its aliases written out)
    are kept once known, and a node met again while its own walk is still open is an alias
    inside the value it names.
    """
    open_ = -1
    height: dict[int, int] = {}
    size: dict[int, int] = {}
    # How each node was first reached: to name a refused node's key path, only when one is.
    parent: dict[int, tuple[yaml.Node, _Step]] = {}

    def path_to(node: yaml.Node) -> list[_Step]:
        path: list[_Step] = []
        at = parent.get(id(node))
        while at is not None:
            path.append(at[1])
            at = parent.get(id(at[0]))
        return path[::-1]

    def refuse(node: yaml.Node, what: str) -> _Refused:
        return _Refused(node.start_mark, what, path_to(node))

    work: list[tuple[yaml.Node, bool]] = [(root, False)]
    while work:
        node, leaving = work.pop()
        if leaving:
            below = max((height[id(child)] for child, _ in _children(node)), default=0)
            height[id(node)] = below + 1
            # Every distinct node met so far is at least every one this value holds: a value
            # larger than them by MAX_ALIASED has aliases that add that many at least.
            size[id(node)] = 1 + sum(size[id(child)] for child, _ in _children(node))
            if size[id(node)] > len(height) + MAX_ALIASED:
                raise refuse(node, f"stands for more than {MAX_ALIASED:,} values once its aliases are written out, far more than a kit config holds. Write the value out, or use fewer aliases of aliases")
            continue
        known = height.get(id(node))
        if known == open_:
            raise refuse(node, "holds an alias to a value it lies inside, a value that would hold itself. Write the value out")
        if known is not None:
            continue
        problem = _tag_problem(node)
        if problem:
            raise refuse(node, problem)
        if isinstance(node, yaml.ScalarNode):
            problem = _text_problem(node.value) or _number_problem(node)
            if problem:
                raise refuse(node, problem)
            height[id(node)] = 0
            size[id(node)] = 1
            continue
        if isinstance(node, yaml.MappingNode) and (odd := _odd_key(node)):
            key, position, what = odd
            raise _Refused(key.start_mark, what, [*path_to(node), ("", position)])
        if isinstance(node, yaml.MappingNode) and (twice := _given_twice(node)):
            key, position, line = twice
            raise _Refused(key.start_mark, f"is given twice in one mapping, here and at line {line}; only one can hold. Keep one of the two", [*path_to(node), (key.value, position)])
        height[id(node)] = open_
        work.append((node, True))
        for child, step in _children(node):
            parent.setdefault(id(child), (node, step))
            work.append((child, False))
    if height[id(root)] > MAX_DEPTH:
        # Down the deepest way to the first collection past the limit, to name its place.
        node, depth = root, 1
        while depth <= MAX_DEPTH:
            node = max((child for child, _ in _children(node)), key=lambda child: height[id(child)])
            depth += 1
        raise _too_deep(node.start_mark)


def _given_twice(node: yaml.MappingNode) -> tuple[yaml.ScalarNode, int, int] | None:
    """The first key given a second time in ``node`` (YAML would keep the second value without a
    word, and a message about the key would point at the first): the key, its position and the
    line of the first. Merge keys (``<<``) are YAML's own way to set a key again, and not one."""
    first: dict[str, int] = {}
    for position, (key, _) in enumerate(node.value, 1):
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        if key.value in first:
            return key, position, first[key.value]
        first[key.value] = key.start_mark.line + 1
    return None


_CORE = "tag:yaml.org,2002:"
# The values JSON can hold, which is all a kit config, a rule file or a schema check knows.
_PLAIN_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))
_KEY_KINDS = {"int": "an integer", "float": "a number", "bool": "a boolean (yes, no, on, off, true, false)", "null": "null (~ or nothing)", "value": "YAML's '=' value key"}
# A 64-bit integer is at most 20 digits; past this many characters (underscores and a 0x
# included) the value is refused without converting it: Python's int() refuses more than
# 4,300 digits outright, and orjson and jsonschema-rs refuse anything past 64 bits.
_INT_CHARS = 100


def _shown_tag(tag: str) -> str:
    # A tag of one's own ('!mine', a URI) is not repeated: it may be anything.
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else "a tag of its own"


def _tag_problem(node: yaml.Node) -> str | None:
    """Why a value tagged as something JSON cannot hold (!!set, !!binary, !!omap, !!timestamp,
    a local tag) is refused; None for a plain one."""
    if node.tag in _PLAIN_TAGS:
        return None
    return f"is tagged {_shown_tag(node.tag)}, a kind of value a kit config cannot hold. Remove the tag and write a plain string, number, list or mapping"


def _odd_key(node: yaml.MappingNode) -> tuple[yaml.Node, int, str] | None:
    """The first key of ``node`` that YAML reads as something other than a string (``5``, ``~``,
    ``yes``, a list): its node, its position and why it is refused. A merge key (``<<``) is one."""
    for position, (key, _) in enumerate(node.value, 1):
        if key.tag in (_CORE + "str", _CORE + "merge") and isinstance(key, yaml.ScalarNode):
            continue
        if isinstance(key, yaml.ScalarNode) and key.tag.startswith(_CORE) and key.tag[len(_CORE):] in _KEY_KINDS:
            kind = _KEY_KINDS[key.tag[len(_CORE):]]
            return key, position, f"is a key YAML reads as {kind}, not as text; every key must be a string. Put the key in quotes"
        return key, position, "is a key that is not a plain string (a list, a mapping or a tagged value). Write the key as text"
    return None


def _number_problem(node: yaml.ScalarNode) -> str | None:
    """Why an integer or a number cannot be used: too long, past 64 bits, or not finite."""
    if node.tag == _CORE + "int":
        if len(node.value) > _INT_CHARS:
            return f"is an integer {len(node.value)} characters long, more than any value of a kit needs. Shorten it, or put it in quotes if it is text"
        try:
            number = _NUMBERS.construct_yaml_int(node)
        except ValueError:
            return "is not an integer Python can read. Shorten it, or put it in quotes if it is text"
        if not -(2**63) <= number < 2**63:
            return "is an integer too large for a kit (past 64 bits, which JSON readers cannot hold). Use a smaller one, or put it in quotes if it is text"
    elif node.tag == _CORE + "float" and not math.isfinite(_NUMBERS.construct_yaml_float(node)):
        return "is not a finite number (.nan, .inf, or too large to hold), which JSON cannot write. Give a finite number, or put it in quotes if it is text"
    return None


_NUMBERS = yaml.constructor.SafeConstructor()


def _text_problem(value: str) -> str | None:
    if "\0" in value:
        return "holds a NUL character, which no name, path or text of a kit may hold. Remove it"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = f"\\u{ord(value[exc.start]):04x}"
        return f"holds {code}, half of a UTF-16 surrogate pair, which no UTF-8 file can hold. Write the character itself (or its \\U escape)"
    return None


def _parse(text: str, loader_class: type[Any]) -> tuple[Any, yaml.Node | None]:
    """The data and the node tree of ``text``, parsed once; its nodes checked before any value is made."""
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        _check_nodes(root)
        return loader.construct_document(root), root
    finally:
        loader.dispose()


def _line_col(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of character ``index`` of ``text``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


class YamlDocument:
    """A parsed YAML file: its data and where each value was written."""

    def __init__(self, label: str, data: Any, root: yaml.Node | None, text: str = "") -> None:
        self.label = label
        self.data = data
        self._root = root
        self._text = text

    def marked_empty(self, marker: str) -> list[tuple[list[_Step], int, int]]:
        """Each empty string value whose line, or a comment line just above it, holds ``marker``
        (``kitbuild init`` marks each value it leaves to the researcher): its key path and its
        1-based line and column, in the file's order."""
        lines = self._text.splitlines()

        def marked(line: int) -> bool:  # 0-based
            if marker in lines[line]:
                return True
            while line > 0 and lines[line - 1].lstrip().startswith("#"):
                line -= 1
                if marker in lines[line]:
                    return True
            return False

        found = []
        work: list[tuple[yaml.Node, list[_Step]]] = [] if self._root is None else [(self._root, [])]
        seen: set[int] = set()
        while work:
            node, steps = work.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, yaml.ScalarNode):
                if node.value == "" and node.style in ("'", '"') and node.start_mark.line < len(lines) and marked(node.start_mark.line):
                    found.append((steps, node.start_mark.line + 1, node.start_mark.column + 1))
                continue
            if isinstance(node, yaml.MappingNode):  # values only: init leaves no key empty
                work.extend((value, [*steps, (key.value if isinstance(key, yaml.ScalarNode) else "", n)]) for n, (key, value) in enumerate(node.value, 1))
            elif isinstance(node, yaml.SequenceNode):
                work.extend((item, [*steps, i]) for i, item in enumerate(node.value))
        return sorted(found, key=lambda f: (f[1], f[2]))

    def position(self, path: Sequence[str | int]) -> tuple[int, int] | None:
        """The 1-based (line, column) where the value at ``path`` is written in this file: of its
        node, or of the deepest node on ``path`` that exists.

        A key given twice is refused when the file is read, so each key names one place. A key
        that a merge (``<<: *base``) brings, and the mapping then sets again, is the one set last,
        as the loaded data has it. A value written as an alias (``licence: *x``) is placed at its
        key, where this path uses it, not at the anchor it names (which may be any other key).
        """
        mark = None
        node = self._root
        key = None
        for step in path:
            if node is None:
                break
            mark = node.start_mark
            key, node = _step(node, step)
            if node is not None and _aliased(node, key, mark):
                # The value was written elsewhere: what this path means is the key that uses it.
                node = None
                mark = key.start_mark if key is not None else mark
                break
        if node is not None:
            # A value that starts below its key (a block list, a mapping) is placed at the key.
            below = key is not None and node.start_mark.line > key.start_mark.line
            mark = key.start_mark if below and key is not None else node.start_mark
        if mark is None:
            return None
        return mark.line + 1, mark.column + 1

    def where(self, path: Sequence[str | int]) -> str:
        """``label:line:col`` for ``path``, or just ``label`` if it cannot be placed."""
        pos = self.position(path)
        return f"{self.label}:{pos[0]}:{pos[1]}" if pos else self.label

    def key_where(self, path: Sequence[str | int]) -> str:
        """``label:line:col`` of the key ``path`` ends with, as written (not of its value, which
        may start on a later line); else as :meth:`where` places ``path``."""
        if path and isinstance(path[-1], str):
            parent = self._node(path[:-1])
            if parent is not None:
                key, _ = _step(parent, path[-1])
                if key is not None:
                    return f"{self.label}:{key.start_mark.line + 1}:{key.start_mark.column + 1}"
        return self.where(path)

    def _node(self, path: Sequence[str | int]) -> yaml.Node | None:
        """The node at exactly ``path``, or None."""
        node = self._root
        for step in path:
            if node is None:
                return None
            _, node = _step(node, step)
        return node


def _step(node: yaml.Node, step: str | int) -> tuple[yaml.Node | None, yaml.Node | None]:
    """(key node, value node) one step below ``node``; a mapping's key set last wins, as in the data."""
    if isinstance(node, yaml.MappingNode):
        for key, value in reversed(node.value):
            if isinstance(key, yaml.ScalarNode) and key.value == str(step):
                return key, value
    elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        return None, node.value[step]
    return None, None


def _aliased(value: yaml.Node, key: yaml.Node | None, container: Any) -> bool:
    """Whether ``value`` is an alias's target here: an anchor's node is written before any alias
    to it, so before the key (or the collection) that uses it."""
    before = key.start_mark if key is not None else container
    return bool(value.start_mark.index < before.index)


def _read_regular(path: Path, label: str) -> bytes:
    """The bytes of ``path``, a regular file of at most :data:`MAX_BYTES`. Opened without blocking
    and looked at before a byte is read: a FIFO would block the build forever, and /dev/zero or
    /dev/urandom would be read until memory runs out."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ConfigError(f"{label}: no such file. Give the path of a kit config, or run 'kitbuild init' to write one.") from None
    except IsADirectoryError:
        raise ConfigError(f"{label}: is a folder, not a YAML file.") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot be read ({exc.strerror}).") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{label}: is a folder, not a YAML file.")
        raise ConfigError(f"{label}: is not a regular file (a pipe, a device or a socket). Give the path of a YAML file saved on disk.")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"{label}: cannot be read ({exc.strerror}).") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{label}: is larger than {MAX_BYTES // 2**20} MiB, far more than a kit config or a rule file needs. Give the right file, or move bulk data out of it.")
    return data


def load_yaml(path: Path, label: str, public_keys: Callable[[], frozenset[str]] = frozenset) -> YamlDocument:
    """Parse ``path``; a syntax error becomes a :class:`ConfigError` with its line and column.

    ``public_keys()`` gives the keys a message may spell out (the schemas' own), asked only when
    a message needs them; any other key is named by its position.
    """
    data = _read_regular(path, label)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"{label}:{line}:{col}: is not UTF-8 text (byte {exc.start} cannot be read as UTF-8). Save the file as UTF-8.") from None
    try:
        try:
            parsed, root = _parse(text, _FAST)
        except yaml.YAMLError:
            if _FAST is _PURE:
                raise
            # libyaml's messages are worded otherwise, and it stops at its own nesting limit
            # (1,000) without a place: the pure-Python parser says what kitbuild reports.
            parsed, root = _parse(text, _PURE)
    except _Refused as exc:
        where = f"{label}:{exc.mark.line + 1}:{exc.mark.column + 1}"
        if exc.steps is not None:
            where += ": " + shown_path(exc.steps, public_keys())
        raise ConfigError(f"{where}: {exc.what}.") from None
    except yaml.reader.ReaderError as exc:
        # A character YAML refuses anywhere in a file (a NUL, another control character): the
        # reader gives its position in the text, not a line.
        line, col = _line_col(text, exc.position)
        raise ConfigError(f"{label}:{line}:{col}: holds the character U+{exc.character:04X}, which YAML does not allow in a file. Remove it.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: the YAML does not parse: {problem}. Fix the syntax at that place.") from None
    return YamlDocument(label, parsed, root, text)


def load_records(data: bytes | str) -> Iterator[Any]:
    """Each document of a YAML record (a bench's own file, for ``kitbuild init``'s scan), as the
    safe loader reads it, but never deeper than :data:`MAX_DEPTH`: past that, a
    :class:`yaml.YAMLError` like any record that does not parse, where ``yaml.safe_load_all``
    would end in a RecursionError."""
    loader = _PURE(data)
    try:
        while loader.check_data():
            yield loader.get_data()
    finally:
        loader.dispose()
