"""YAML → plain Python data plus the line of every mapping key and sequence item, fast.

Why not ruamel.yaml (which has line numbers built in): its round-trip loader took 25-35 s on
10,000 samples (5.75 MB), its safe loader 15-17 s. PyYAML's `yaml.compose()` with libyaml takes
1.2 s on the same kind of file but recurses in C (a document nested ~100,000 levels deep
crashes the interpreter). So this module reads libyaml's *event* stream (`CSafeLoader`,
falling back to the pure-Python `SafeLoader`) and builds the data in one loop without a
node tree: every event carries its line, so lines go into a side table keyed by JSON path.

What it adds over plain PyYAML:
* YAML 1.2 core-schema scalars (`omk.loader.yaml_core`): `yes`/`on` stay strings, `0o17` is 15.
* duplicate mapping keys, unknown tags, undefined or recursive aliases: `Issue`s with a line;
* `<<` merge keys (as js-yaml, which omk 0.54 used, accepts them);
* limits on nesting depth and alias expansion, so no input can hang or crash the loader;
* garbage collection paused while building (the collector otherwise triples the time on a
  large file: it rescans the growing tree of new containers again and again).
"""

from __future__ import annotations

import gc
from typing import Any

import yaml

from omk.loader.document import Document, Issue, LineTable, ParseFailure, Path_
from omk.loader.yaml_core import MAP, SEQ, TagError, resolve_plain, resolve_tagged

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
ALIAS_BUDGET = 1_000_000  # nodes that aliases may add on top of 10x the written ones

_NO_KEY = object()  # a mapping frame waiting for its next key
_BAD_KEY = object()  # the key was not text: the value that follows is dropped
_MERGE = object()  # the key was a plain `<<`: the value is merged at the end of the mapping


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
    enabled = gc.isenabled()
    gc.disable()
    loader = _Loader(text)
    try:
        return _build(loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in reason:  # PyYAML 6.0.4 stops deep nesting itself: say it as omk does
            raise ParseFailure(f"YAML parse error: nesting deeper than {MAX_DEPTH} levels", mark.line + 1 if mark else None) from None
        if exc.context and exc.problem and exc.context_mark is not None and mark is not exc.context_mark:
            reason = f"{reason} ({exc.context} at line {exc.context_mark.line + 1})"
        raise ParseFailure(f"YAML parse error: {reason}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:  # ReaderError (control characters) and the like
        raise ParseFailure(f"YAML parse error: {exc}", _reader_line(text, exc)) from None
    finally:
        loader.dispose()
        if enabled:
            gc.enable()


def _reader_line(text: str, exc: yaml.YAMLError) -> int | None:
    position = getattr(exc, "position", None)
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def _build(loader: Any) -> Document:
    """One pass over the events. The innermost open collection lives in locals (`container`,
    `path`, `is_map`, `key`) for speed; `stack` keeps the outer ones as `_Frame`s."""
    lines: dict[Path_, int] = {}
    issues: list[Issue] = []
    anchors: dict[str, tuple[Any, int]] = {}  # name -> (value, nodes it stands for)
    open_anchors: set[str] = set()
    stack: list[_Frame] = []
    frame: _Frame | None = None  # the innermost open collection
    container: Any = None
    path: Path_ = ()
    is_map = False
    key: Any = _NO_KEY
    root: Any = None
    documents = 0
    nodes = 0  # written nodes
    extra = 0  # nodes added by aliases

    get_event = loader.get_event
    scalar_event = yaml.ScalarEvent
    mapping_start = yaml.MappingStartEvent
    sequence_start = yaml.SequenceStartEvent
    mapping_end = yaml.MappingEndEvent
    sequence_end = yaml.SequenceEndEvent
    alias_event = yaml.AliasEvent

    while True:
        event = get_event()
        cls = event.__class__

        if cls is scalar_event:
            nodes += 1
            if is_map and key is _NO_KEY:  # a mapping key
                text = event.value
                line = event.start_mark.line + 1
                if event.tag is None and not event.style and text == "<<":
                    key = _MERGE
                    frame.merge_line = line  # type: ignore[union-attr]
                    continue
                key_path = path + (text,)
                if text in container:
                    issues.append(_duplicate(key_path, text, line, lines))
                else:
                    lines[key_path] = line
                key = text
                if event.anchor:
                    anchors[event.anchor] = (text, 1)
                continue
            tag = event.tag
            if tag is None:
                value = event.value if event.style else resolve_plain(event.value)
            elif tag == "!":
                value = event.value
            else:
                try:
                    value = resolve_tagged(tag, event.value)
                except TagError as exc:
                    issues.append(Issue(_value_path(path, is_map, key, container), event.start_mark.line + 1, str(exc)))
                    value = event.value
            if event.anchor:
                anchors[event.anchor] = (value, 1)
            if is_map:
                if key.__class__ is str:
                    container[key] = value
                elif key is _MERGE:
                    frame.merges = [*(frame.merges or []), value]  # type: ignore[union-attr]
                key = _NO_KEY
            elif frame is not None:
                item_path = path + (len(container),)
                container.append(value)
                lines[item_path] = event.start_mark.line + 1
            else:
                root = value

        elif cls is mapping_end or cls is sequence_end:
            done = frame
            if done.merges is not None:  # type: ignore[union-attr]
                _merge(done, lines, issues)  # type: ignore[arg-type]
            if done.anchor:  # type: ignore[union-attr]
                open_anchors.discard(done.anchor)  # type: ignore[union-attr]
                anchors[done.anchor] = (done.container, nodes + extra - done.start + 1)  # type: ignore[union-attr]
            frame = stack.pop() if stack else None
            if frame is not None:
                container, path, is_map, key = frame.container, frame.path, frame.is_map, frame.key
            else:
                container, path, is_map, key = None, (), False, _NO_KEY

        elif cls is mapping_start or cls is sequence_start:
            nodes += 1
            line = event.start_mark.line + 1
            if len(stack) >= MAX_DEPTH:
                raise ParseFailure(f"YAML parse error: nesting deeper than {MAX_DEPTH} levels", line)
            new: Any = {} if cls is mapping_start else []
            tag = event.tag
            if tag is not None and tag != "!" and tag != (MAP if cls is mapping_start else SEQ):
                issues.append(Issue(_value_path(path, is_map, key, container), line, f"unsupported YAML tag {tag}"))
            if frame is None:
                new_path: Path_ = ()
                root = new
                lines[()] = line
            elif is_map:
                if key.__class__ is str:
                    container[key] = new
                    new_path = path + (key,)
                elif key is _MERGE:
                    frame.merges = [*(frame.merges or []), new]
                    new_path = path + ("<<",)
                else:
                    if key is _NO_KEY:
                        issues.append(Issue(path, line, "a mapping key must be text, not a mapping or a list"))
                    new_path = path + ("?",)
                    key = _BAD_KEY if key is _NO_KEY else _NO_KEY
                    frame.key = key
                    stack.append(frame)
                    frame = _Frame(new, new_path, event.anchor, nodes + extra)
                    container, path, is_map, key = new, new_path, frame.is_map, _NO_KEY
                    continue
                frame.key = _NO_KEY
            else:
                new_path = path + (len(container),)
                container.append(new)
                lines[new_path] = line
            anchor = event.anchor
            if anchor:
                anchors[anchor] = (new, 1)
                open_anchors.add(anchor)
            if frame is not None:
                stack.append(frame)
            frame = _Frame(new, new_path, anchor, nodes + extra)
            container, path, is_map, key = new, new_path, frame.is_map, _NO_KEY

        elif cls is alias_event:
            name = event.anchor
            line = event.start_mark.line + 1
            if name in open_anchors:
                issues.append(Issue(_value_path(path, is_map, key, container), line, f"alias *{name} refers to a node that contains it"))
                value = None
            elif name not in anchors:
                issues.append(Issue(_value_path(path, is_map, key, container), line, f"undefined alias *{name}"))
                value = None
            else:
                value, size = anchors[name]
                extra += size
                if extra > ALIAS_BUDGET + 10 * nodes:
                    raise ParseFailure("YAML parse error: aliases expand to too much data", line)
            if is_map and key is _NO_KEY:  # an alias used as a key
                if isinstance(value, str):
                    key_path = path + (value,)
                    if value in container:
                        issues.append(_duplicate(key_path, value, line, lines))
                    else:
                        lines[key_path] = line
                    key = value
                else:
                    issues.append(Issue(path, line, "a mapping key must be text"))
                    key = _BAD_KEY
                continue
            if is_map:
                if key.__class__ is str:
                    container[key] = value
                elif key is _MERGE:
                    frame.merges = [*(frame.merges or []), value]  # type: ignore[union-attr]
                key = _NO_KEY
            elif frame is not None:
                item_path = path + (len(container),)
                container.append(value)
                lines[item_path] = line
            else:
                root = value

        elif cls is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise ParseFailure(
                    "YAML parse error: expected a single document, found another (remove the extra '---')",
                    event.start_mark.line + 1,
                )

        elif cls is yaml.StreamEndEvent:
            break

    return Document(root, LineTable(lines), issues)


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
