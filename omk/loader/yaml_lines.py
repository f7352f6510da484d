"""YAML → plain Python data plus the line of every mapping key and sequence item, fast.

Why not ruamel.yaml (which has line numbers built in): it is an order of magnitude slower on a
large file (docs/benchmarks.md). PyYAML's `yaml.compose()` with libyaml is fast but recurses in
C (a document nested deeply enough crashes the interpreter). So this module reads libyaml's
*event* stream (`CSafeLoader`, falling back to the pure-Python `SafeLoader`) and builds the data
in one loop without a node tree: every event carries its line, so lines go into a side table
keyed by JSON path.

What it adds over plain PyYAML:
* YAML 1.2 core-schema scalars (`omk.loader.yaml_core`): `yes`/`on` stay strings, `0o17` is 15.
* duplicate mapping keys, unknown tags, undefined or recursive aliases: `Issue`s with a line;
* `<<` merge keys (as js-yaml, which omk 0.54 used, accepts them);
* limits on nesting depth and alias expansion, so no input can hang or crash the loader;
* garbage collection paused while building (the collector otherwise rescans the growing tree of
  new containers again and again, and a large file takes several times as long).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from omk.loader.depth import MAX_DEPTH
from omk.loader.document import Document, Issue, LineTable, ParseFailure, Path_
from omk.loader.yaml_core import MAP, SEQ, TagError, resolve_plain, resolve_tagged

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

ALIAS_BUDGET = 1_000_000  # nodes that aliases may add on top of 10x the written ones

_NO_KEY = object()  # a mapping frame waiting for its next key
_BAD_KEY = object()  # the key was not text: the value that follows is dropped
_MERGE = object()  # the key was a plain `<<`: the value is merged at the end of the mapping
_MAPPING_START = yaml.MappingStartEvent


class _Frame:
    __slots__ = ("container", "path", "is_map", "key", "merges", "merge_line", "anchor", "start")

    def __init__(self, container: Any, path: Path_, anchor: str | None, start: int):
        self.container = container
        self.path = path
        self.is_map = isinstance(container, dict)
        self.key: Any = _NO_KEY
        self.merges: list[Any] | None = None
        self.merge_line = 0
        self.anchor = anchor
        self.start = start


def parse_yaml(text: str) -> Document:
    """Parse one YAML document. Raises `ParseFailure` (with a line) for a syntax error."""
    return parse_anchored(text)[0]


def parse_anchored(text: str) -> tuple[Document, bool]:
    """`parse_yaml`, and whether the document defines an anchor (omk.loader.yaml_memo reads a
    document in pieces only when no part of it can refer to another)."""
    loader = _Loader(text)
    try:
        return _build(loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join((exc.problem or exc.context or "invalid YAML").split())
        if "maximum nesting depth" in reason:  # PyYAML 6.0.4 stops deep nesting itself: say it as omk does
            raise ParseFailure(f"YAML parse error: nesting deeper than {MAX_DEPTH} levels", mark.line + 1 if mark else None) from None
        if exc.context and exc.problem and exc.context_mark is not None and mark is not exc.context_mark:
            reason = f"{reason} ({' '.join(exc.context.split())} at line {exc.context_mark.line + 1})"
        column = f" at column {mark.column + 1}" if mark else ""
        hint = _hint(exc, text, mark)
        raise ParseFailure(f"YAML parse error{column}: {reason}{hint}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:  # ReaderError (control characters) and the like
        raise ParseFailure(f"YAML parse error: {_reader_reason(exc)}", _reader_line(text, exc)) from None
    finally:
        loader.dispose()


# What PyYAML says → what to do about it (the first that matches).
_HINTS = (
    ("mapping values are not allowed", 'a value that contains ": " must be quoted, e.g. prompt: "Note: read this"'),
    ("could not find expected ':'", 'each line of a mapping is "key: value"; text over several lines needs | or quotes'),
    ("did not find expected '-' indicator", "the items of one list must start at the same column"),
    ("expected <block end>", "check the indentation: this line is not aligned with the lines above it"),
    ("did not find expected ',' or '}'", "a { … } mapping is not closed, or a value in it needs quotes (a comma or a colon)"),
    ("did not find expected ',' or ']'", "a [ … ] list is not closed, or an item in it needs quotes (a comma or a colon)"),
    ("found undefined alias", "an *alias must name an &anchor defined above it"),
    ("found unknown escape character", 'in "double quotes" a backslash starts an escape: use \\\\ or single quotes'),
    ("found duplicate anchor", "each &anchor name may be defined once"),
)


def _hint(exc: yaml.MarkedYAMLError, text: str, mark: Any) -> str:
    problem, context = exc.problem or "", exc.context or ""
    if mark is not None and "cannot start any token" in problem:
        lines = text.splitlines()
        line = lines[mark.line] if mark.line < len(lines) else ""
        if "\t" in line[: mark.column + 1]:
            return "; hint: YAML indents with spaces, not tabs"
        return "; hint: quote a value that starts with a special character (@, `, %, |, >)"
    if "end of stream" in problem and "quoted scalar" in context:
        return "; hint: a quoted string is not closed: add its closing quote"
    if mark is not None and "mapping values are not allowed" in problem and (key := _indented_key(text, mark)):
        return f'; hint: check the indentation: "{key}:" is indented deeper than the key above it, so YAML reads it as more text of that value'
    for needle, hint in _HINTS:
        if needle in problem:
            return f"; hint: {hint}"
    return ""


def _indented_key(text: str, mark: Any) -> str | None:
    """The key of a `key: value` line the parser took as the continuation of the value above it
    (the line is indented deeper than that one): an indentation mistake, not a colon to quote.
    None when a key comes earlier on the same line (`prompt: Note: read this`)."""
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    before = line[: mark.column]
    if not before.strip() or not re.fullmatch(r"\s*(?:- )?[\w.-]+\s*", before):
        return None
    return before.strip().removeprefix("- ").strip()


def _reader_reason(exc: yaml.YAMLError) -> str:
    """PyYAML's reader error, on one line and without its own position text."""
    character = getattr(exc, "character", None)
    if isinstance(character, str) and len(character) == 1:
        return f"unacceptable character U+{ord(character):04X} (a control character); remove it"
    return " ".join(str(exc).split("\n")[0].split())


def _reader_line(text: str, exc: yaml.YAMLError) -> int | None:
    position = getattr(exc, "position", None)
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def _build(loader: Any) -> tuple[Document, bool]:
    """One pass over the events. Scalars, most of the events, are handled here, with the innermost
    open collection in locals (`container`, `path`, `is_map`, `key`); the `_Builder` handles the
    other events, and the locals are read from the frame it opens or returns to."""
    builder = _Builder()
    frames = {
        yaml.MappingStartEvent: builder.start,
        yaml.SequenceStartEvent: builder.start,
        yaml.MappingEndEvent: builder.end,
        yaml.SequenceEndEvent: builder.end,
    }
    get_event, scalar_event, alias_event = loader.get_event, yaml.ScalarEvent, yaml.AliasEvent
    lines, anchors = builder.lines, builder.anchors
    container: Any = None
    path: Path_ = ()
    is_map, key = False, _NO_KEY
    while True:
        event = get_event()
        cls = event.__class__
        if cls is scalar_event:
            builder.nodes += 1
            if is_map and key is _NO_KEY:  # a mapping key
                text = event.value
                if event.tag is None and not event.style and text == "<<":
                    key = builder.merge_key(event)
                    continue
                key_path = path + (text,)
                if text in container:
                    builder.issues.append(_duplicate(key_path, text, event.start_mark.line + 1, lines))
                else:
                    lines[key_path] = event.start_mark.line + 1
                key = text
                if event.anchor:
                    anchors[event.anchor] = (text, 1)
                continue
            value = (event.value if event.style else resolve_plain(event.value)) if event.tag is None else builder.tagged(event, key)
            if event.anchor:
                anchors[event.anchor] = (value, 1)
            if is_map:
                if key.__class__ is str:
                    container[key] = value
                elif key is _MERGE:
                    builder.merge_value(value)
                key = _NO_KEY
            elif container is not None:
                lines[path + (len(container),)] = event.start_mark.line + 1
                container.append(value)
            else:
                builder.root = value
        elif (change := frames.get(cls)) is not None:
            frame = change(event, key)
            container, path, is_map, key = (frame.container, frame.path, frame.is_map, frame.key) if frame else (None, (), False, _NO_KEY)
        elif cls is alias_event:
            key = builder.alias(event, key)
        elif cls is yaml.DocumentStartEvent:
            builder.document_start(event)
        elif cls is yaml.StreamEndEvent:
            return Document(builder.root, LineTable(lines), builder.issues), bool(anchors)


class _Builder:
    """What `_build` does not keep in locals: the lines, issues and anchors so far, and the open
    collections (`frame` the innermost, `stack` the outer ones)."""

    __slots__ = ("lines", "issues", "anchors", "open_anchors", "stack", "frame", "root", "documents", "nodes", "extra")

    def __init__(self) -> None:
        self.lines: dict[Path_, int] = {}
        self.issues: list[Issue] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # name -> (value, nodes it stands for)
        self.open_anchors: set[str] = set()
        self.stack: list[_Frame] = []
        self.frame: _Frame | None = None
        self.root: Any = None
        self.documents = 0
        self.nodes = 0  # written nodes
        self.extra = 0  # nodes added by aliases

    def tagged(self, event: Any, key: Any) -> Any:
        """A scalar with a tag (`!!int 3`, `! text`); an unknown tag is an issue and keeps the text."""
        if event.tag == "!":
            return event.value
        try:
            return resolve_tagged(event.tag, event.value)
        except TagError as exc:
            self.issues.append(Issue(self._value_path(key), event.start_mark.line + 1, str(exc)))
            return event.value

    def merge_key(self, event: Any) -> Any:
        """A plain `<<` key: the value that follows is merged when the mapping ends."""
        self.frame.merge_line = event.start_mark.line + 1  # type: ignore[union-attr]  # a key is read inside an open mapping
        return _MERGE

    def merge_value(self, value: Any) -> None:
        self.frame.merges = [*(self.frame.merges or []), value]  # type: ignore[union-attr]  # merged into an open mapping

    def start(self, event: Any, key: Any) -> _Frame:
        """A mapping or a sequence begins: attach it where it belongs; it is the new innermost frame."""
        self.nodes += 1
        line = event.start_mark.line + 1
        if len(self.stack) >= MAX_DEPTH:
            raise ParseFailure(f"YAML parse error: nesting deeper than {MAX_DEPTH} levels", line)
        is_mapping = event.__class__ is _MAPPING_START
        new: Any = {} if is_mapping else []
        tag = event.tag
        if tag is not None and tag != "!" and tag != (MAP if is_mapping else SEQ):
            self.issues.append(Issue(self._value_path(key), line, f"unsupported YAML tag {tag}"))
        parent, anchor = self.frame, event.anchor
        if parent is None:
            new_path: Path_ = ()
            self.root = new
            self.lines[()] = line
        elif not parent.is_map:
            new_path = parent.path + (len(parent.container),)
            parent.container.append(new)
            self.lines[new_path] = line
        elif key is _MERGE:
            new_path = parent.path + ("<<",)
            self.merge_value(new)
            parent.key = _NO_KEY
        elif key.__class__ is str:
            new_path = parent.path + (key,)
            parent.container[key] = new
            parent.key = _NO_KEY
        else:  # a collection where a key should be: built, then dropped
            if key is _NO_KEY:
                self.issues.append(Issue(parent.path, line, "a mapping key must be text, not a mapping or a list"))
            new_path, parent.key = parent.path + ("?",), _BAD_KEY if key is _NO_KEY else _NO_KEY
            anchor = None  # registered when the collection ends
        if anchor:
            self.anchors[anchor] = (new, 1)
            self.open_anchors.add(anchor)
        if parent is not None:
            self.stack.append(parent)
        self.frame = _Frame(new, new_path, event.anchor, self.nodes + self.extra)
        return self.frame

    def end(self, event: Any, key: Any) -> _Frame | None:
        """The innermost collection ends; the frame that is innermost again, if any."""
        done: _Frame = self.frame  # type: ignore[assignment]  # the parser ends only a collection it started
        if done.merges is not None:
            _merge(done, self.lines, self.issues)
        if done.anchor:
            self.open_anchors.discard(done.anchor)
            self.anchors[done.anchor] = (done.container, self.nodes + self.extra - done.start + 1)
        self.frame = self.stack.pop() if self.stack else None
        return self.frame

    def alias(self, event: Any, key: Any) -> Any:
        """`*name`: its value goes where a scalar would; the key to use next."""
        name = event.anchor
        line = event.start_mark.line + 1
        if name in self.open_anchors:
            self.issues.append(Issue(self._value_path(key), line, f"alias *{name} refers to a node that contains it"))
            value = None
        elif name not in self.anchors:
            self.issues.append(Issue(self._value_path(key), line, f"undefined alias *{name}"))
            value = None
        else:
            value, size = self.anchors[name]
            self.extra += size
            if self.extra > ALIAS_BUDGET + 10 * self.nodes:
                raise ParseFailure("YAML parse error: aliases expand to too much data", line)
        frame = self.frame
        if frame is None:
            self.root = value
            return key
        if not frame.is_map:
            self.lines[frame.path + (len(frame.container),)] = line
            frame.container.append(value)
            return key
        if key is _NO_KEY:  # an alias used as a key
            if not isinstance(value, str):
                self.issues.append(Issue(frame.path, line, "a mapping key must be text"))
                return _BAD_KEY
            key_path = frame.path + (value,)
            if value in frame.container:
                self.issues.append(_duplicate(key_path, value, line, self.lines))
            else:
                self.lines[key_path] = line
            return value
        if key.__class__ is str:
            frame.container[key] = value
        elif key is _MERGE:
            self.merge_value(value)
        return _NO_KEY

    def document_start(self, event: Any) -> None:
        self.documents += 1
        if self.documents > 1:
            raise ParseFailure(
                "YAML parse error: expected a single document, found another (remove the extra '---')",
                event.start_mark.line + 1,
            )

    def _value_path(self, key: Any) -> Path_:
        """The path of the value about to be attached to the innermost open collection."""
        frame = self.frame
        if frame is None:
            return ()
        return _value_path(frame.path, frame.is_map, key, frame.container)


def _duplicate(key_path: Path_, key: str, line: int, lines: dict[Path_, int]) -> Issue:
    first = lines.get(key_path)
    where = f" (first defined at line {first})" if first else ""
    return Issue(key_path, line, f'duplicate key "{key}"{where}')


def _value_path(path: Path_, is_map: bool, key: Any, container: Any) -> Path_:
    """The path of the value about to be attached to the innermost open collection."""
    if container is None:
        return ()
    if is_map:
        return path + (key,) if isinstance(key, str) else path
    return path + (len(container),)


def _merge(frame: _Frame, lines: dict[Path_, int], issues: list[Issue]) -> None:
    """`<<: *base` / `<<: [*a, *b]`: keys written in the mapping win, then earlier merges."""
    target = frame.container
    for value in frame.merges or []:
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                issues.append(Issue(frame.path, frame.merge_line, "<< (merge key) needs a mapping or a list of mappings"))
                continue
            for key, item in source.items():
                if key not in target:
                    target[key] = item
                    lines[frame.path + (key,)] = frame.merge_line
