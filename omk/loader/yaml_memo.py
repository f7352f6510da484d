"""A YAML samples file read once per distinct piece of text: repeated parts are not parsed again.

A large suite repeats most of its text word for word: the same JSON Schema assertion, the same
capability list, the same `contains` check in every sample. Parsing YAML costs per event (a key,
a value, a list's start), so a repeated 30-line assertion costs as much the ten-thousandth time
as the first. This module reads a block-style samples file in pieces and parses each distinct
piece once:

* the file's list of samples (`samples:` at the top, or a list at the top) is cut into its
  samples at the lines that start an item (`- ` at the list's column);
* a sample written as a mapping is cut into its fields at the lines that start a key at the
  mapping's column (the first field, on the `- ` line, stays with the sample's own text);
* a field whose value is a block list (`assertions:`) is cut into its items the same way.

A field, or a run of items in a row, whose text (its indentation included) came earlier in the
file is replaced by one line standing for it (`key: 0`, `- 0`) followed by as many empty lines
as it had, so every other line keeps its number. (A long block list is not looked up whole: its
items are, and a run of them stands in as one.) That reduced text is parsed the careful way
(omk.loader.yaml_lines), in one pass; then each stand-in is replaced by the value (or values)
read where the same text came first, and its lines are those of that place, moved by the
distance between the two (`MemoLines`, worked out when a line is asked for).

Why the value is the same: the cuts are at lines whose first character sits at a list's or
mapping's column, and every other line of a piece starts deeper (or is a comment or empty), so
a piece is read the same way wherever it stands, unless a cut falls inside a quoted string or a
`[ ]`/`{ }` spanning lines; and it stands as deep in the file as its first place, so the
nesting limit applies the same. A cut inside a quoted string or a bracket shows in the reduced
text's parse: an item or key would not start at the line of its cut. So every cut is checked against the parse (each sample, field
and item where it was expected, no more and no fewer), and the file is read whole the careful
way (`None`) when one is not, and whenever anything could make a piece depend on another or on
its place: an anchor (and so any alias), a directive or document marker, a line break other than
`\\n` or `\\r\\n`, a byte-order mark, any issue the parse raised (a repeated key, a bad tag), a
parse error. Every message about a file therefore comes from the careful way, unchanged.

A repeated part is the object read at its first place (the loader's `Sharer` makes equal content
one object anyway). The memo keeps at most `BUDGET` characters of text, then starts over.
"""

from __future__ import annotations

import re
from typing import Any

from omk.loader.document import Document, LineTable, ParseFailure, Path_
from omk.loader.share import DEEP, Sharer
from omk.loader.yaml_lines import parse_anchored, parse_yaml

BUDGET = 1 << 20  # characters of piece texts kept as keys
SMALL = 40  # a one-line piece shorter than this is left in the text: its stand-in saves nothing
WHOLE = 512  # a block list longer than this is not looked up whole, only item by item
_KEY = re.compile(r"([A-Za-z_][\w-]*):(?=[ \t\r\n]|\Z)")  # a plain key at a line's start
_LIST_KEY = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(?:#[^\n]*)?)?\r?\n")  # `key:` alone on its line
_ITEM_KEY = re.compile(r" *- +(?=[A-Za-z_])")  # `- key: ...`: a sample written as a mapping
_CONTENT = re.compile(r"\n( *)(?=[^ \r\n#])")  # the next line that is not empty nor a comment
_SAMPLES = re.compile(r"\nsamples:(?:[ \t]+(?:#[^\n]*)?)?\r?\n")
_LONE_CR = re.compile(r"\r(?!\n)")
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029", "\ufeff")  # line breaks to libyaml, or a byte-order mark
_LOW: dict[int, re.Pattern[str]] = {}


def read_yaml(text: str) -> Document:
    """The YAML document in `text`, read through the memo when it can be, else the careful way."""
    found = quick_yaml(text)
    return found[0] if found is not None else parse_yaml(text)


def yaml_document(text: str, shared: Sharer) -> Document:
    """`read_yaml`, with the samples shared through the load's `shared` when read through the
    memo (`Document.shared`): a part put in several places is shared once, not once a place."""
    found = quick_yaml(text)
    if found is None:
        return parse_yaml(text)
    doc, repeated = found
    data = doc.data
    samples = data.get("samples") if isinstance(data, dict) else data
    if isinstance(samples, list):
        share = _Sharing(shared, repeated).sample
        samples[:] = [share(sample) for sample in samples]
        doc.shared = True
    return doc


def quick_yaml(text: str) -> tuple[Document, set[int]] | None:
    """The document as `parse_yaml(text)` reads it, and the ids of its parts put in more than
    one place; None when the memo cannot vouch for it."""
    if _unusual(text):
        return None
    plan = _Plan("\n" + text)
    if not plan.cut():
        return None
    try:
        doc, anchored = parse_anchored("".join(plan.pieces))
    except ParseFailure:
        return None  # the careful way words the error
    if anchored or doc.issues or not isinstance(doc.lines, LineTable):
        return None
    return plan.finish(doc, doc.lines)


class _Sharing:
    """`Sharer.sample`, with a part put in several places shared once: the same object then."""

    __slots__ = ("shared", "repeated", "done")

    def __init__(self, shared: Sharer, repeated: set[int]):
        self.shared = shared
        self.repeated = repeated
        self.done: dict[int, Any] = {}

    def sample(self, raw: Any) -> Any:
        if raw.__class__ is not dict:
            return raw
        text, value = self.shared.text, self.value
        return {text(k): value(v, 1) for k, v in raw.items()}

    def value(self, value: Any, depth: int) -> Any:
        # A list that holds a container is never shared whole (omk.loader.share): only its items.
        if value.__class__ is list and depth < DEEP and any(v.__class__ is dict or v.__class__ is list for v in value):
            return [self.value(v, depth + 1) for v in value]
        if id(value) not in self.repeated:
            return self.shared.value(value, depth)
        found = self.done.get(id(value))
        if found is None:
            found = self.done[id(value)] = self.shared.value(value, depth)
        return found


def _unusual(text: str) -> bool:
    if text.startswith(("---", "...", "%")) or "\n---" in text or "\n..." in text or "\n%" in text:
        return True  # a document marker or a directive
    if "\r" in text and _LONE_CR.search(text):
        return True
    return any(mark in text for mark in _OTHER_BREAKS)


def _low(indent: int) -> re.Pattern[str]:
    """The lines (not empty, not a comment) that start at most `indent` columns in."""
    found = _LOW.get(indent)
    if found is None:
        found = _LOW[indent] = re.compile(rf"\n( {{0,{indent}}})(?=[^ \r\n#])")
    return found


def _is_item(body: str, at: int) -> bool:
    """Whether `- ` (or a lone `-`) starts at `at`: a block list's item."""
    return body[at] == "-" and (at + 1 == len(body) or body[at + 1] in " \t\r\n")


class _Run:
    """Items `index` to `index + count - 1` of a list, the same text as items `first` onwards of
    an earlier list, `moved` lines further down; one stand-in at `at` in the reduced text."""

    __slots__ = ("index", "first", "line", "moved", "start", "stop", "breaks", "count", "at")

    def __init__(self, index: int, first: Any, line: int, moved: int, start: int, stop: int, breaks: int):
        self.index, self.first, self.line, self.moved = index, first, line, moved
        self.start, self.stop, self.breaks = start, stop, breaks
        self.count = 1
        self.at = index

    def follows(self, index: int, first: Any, moved: int) -> bool:
        """Whether item `index`, first seen at `first`, continues the run."""
        mine = self.first
        return (
            index == self.index + self.count
            and moved == self.moved
            and first[:2] == mine[:2]
            and first[2] == mine[2] + self.count
        )


class _Plan:
    """The cuts of one file, the reduced text, and what the parse of that text must show."""

    def __init__(self, body: str):
        self.body = body  # the text after a "\n", so that every line starts after one
        self.pieces: list[str] = []
        self.done = 1  # where in `body` the text not yet in `pieces` starts
        self.counted_to = self.counted = 0  # `_line`: lines before position `counted_to`
        self.prefix: Path_ = ()
        self.top: list[tuple[str, int]] = []  # top-level keys that must start at these lines
        self.samples = 0
        self.sizes: list[tuple[Path_, int]] = []  # (path, how many keys or items) of each cut container
        self.stand_ins: list[tuple[Path_, int, Path_, int]] = []  # fields: (where, its line, first place, lines between)
        self.lists: list[tuple[int, str, list[_Run]]] = []  # lists with items standing in, in text order
        self.seen: dict[str, tuple[Path_, int]] = {}  # piece text → (its first place, its line)
        self.kept = 0

    def _line(self, at: int) -> int:
        """The number of the line that starts at `at` (just after a "\\n"); asked in text order."""
        self.counted += self.body.count("\n", self.counted_to, at)
        self.counted_to = at
        return self.counted

    def cut(self) -> bool:
        """Cut the file into its pieces; False when it is not a list of samples written in blocks."""
        body = self.body
        first = _CONTENT.search(body)
        if first is None or first.group(1):
            return False
        if _is_item(body, first.end()):
            return self._samples(first.start(), 0)
        found = _SAMPLES.search(body)
        if found is None:
            return False
        self.prefix = ("samples",)
        self.top.append(("samples", self._line(found.start() + 1)))
        item = _CONTENT.search(body, found.end() - 1)
        if item is None or not _is_item(body, item.end()):
            return False
        return self._samples(item.start(), len(item.group(1)))

    def _samples(self, at: int, indent: int) -> bool:
        """The list of samples whose first item's line starts after the "\\n" at `at`."""
        body = self.body
        starts: list[int] = []
        end, after = len(body), ""
        for low in _low(indent).finditer(body, at):
            if len(low.group(1)) == indent and _is_item(body, low.end()):
                starts.append(low.start() + 1)
                continue
            end = low.start() + 1  # the list ends: the line must be a top-level key
            key = _KEY.match(body, end)
            if not self.prefix or low.group(1) or key is None:
                return False
            after = key.group(1)
            break
        self.samples = len(starts)
        for s, start in enumerate(starts):
            self._sample(s, start, starts[s + 1] if s + 1 < len(starts) else end)
        if after:
            self.top.append((after, self._line(end)))
        self.pieces.append(body[self.done :])
        return True

    def _sample(self, s: int, start: int, end: int) -> None:
        """One sample: cut into its fields when it is a mapping whose keys are plain words."""
        body = self.body
        head = _ITEM_KEY.match(body, start, end)
        if head is None:
            return
        column = head.end() - start
        cuts: list[tuple[int, str, list[int]]] = []  # (start, key, the items of a list at the key's column)
        for low in _low(column).finditer(body, start, end):
            at = low.end()
            if at - low.start() <= column:  # the "\n" and fewer spaces than the column
                return  # not a mapping at one column: the sample is parsed as written
            if body[at] == "-" and body[at + 1] in " \t\r\n":
                if cuts:
                    cuts[-1][2].append(low.start() + 1)  # an item of a list written at its key's column
                continue
            word = _KEY.match(body, at)
            if word is None:
                return
            cuts.append((low.start() + 1, word.group(1), []))
        self.sizes.append(((s,), len(cuts) + 1))
        for n, (at, key, items) in enumerate(cuts):
            self._field(s, key, at, cuts[n + 1][0] if n + 1 < len(cuts) else end, column, items)

    def _field(self, s: int, key: str, at: int, end: int, column: int, items: list[int]) -> None:
        body = self.body
        head = _LIST_KEY.match(body, at + column, end)  # `key:` alone on its line, a block list below?
        first = _CONTENT.search(body, head.end() - 1, end) if head is not None and head.group(1) == key else None
        listed = first is not None and body[first.end()] == "-" and body[first.end() + 1] in " \t\r\n"
        if not listed or end - at < WHOLE:  # a longer list is taken item by item: its runs stand in
            found = self._seen_before(at, end, (s, key))
            if found is not None:
                self._stand_in(at, end, " " * column + key + ": 0", found[2])
                self.stand_ins.append(((s, key), found[1], found[0], found[1] - found[3]))
                return
        if first is None or not listed:
            return
        if not items:  # the list is indented deeper than its key: find its items
            column = len(first.group(1))
            items = self._items(first.start(), end, column)
        if items and items[0] == first.start() + 1:
            self._list(s, key, items, end, " " * column + "- 0")

    def _list(self, s: int, key: str, items: list[int], end: int, stand_in: str) -> None:
        """The items of a block list: a run of items that came before, one after the other in
        an earlier sample's list, stands in as one line (`- 0`)."""
        runs: list[_Run] = []
        last = len(items) - 1
        for j, start in enumerate(items):
            stop = items[j + 1] if j < last else end
            found = self._seen_before(start, stop, (s, key, j))
            if found is None:
                continue
            first, line, breaks, first_line = found
            run = runs[-1] if runs else None
            if run is not None and run.follows(j, first, line - first_line):
                run.count, run.stop, run.breaks = run.count + 1, stop, run.breaks + breaks
            else:
                runs.append(_Run(j, first, line, line - first_line, start, stop, breaks))
        shrink = 0
        for run in runs:
            self._stand_in(run.start, run.stop, stand_in, run.breaks)
            run.at = run.index - shrink  # its place in the reduced text's list
            shrink += run.count - 1
        self.sizes.append(((s, key), len(items) - shrink))
        if runs:
            self.lists.append((s, key, runs))

    def _items(self, at: int, end: int, column: int) -> list[int]:
        """Where the items of a block list at `column` start, from the "\n" at `at` to `end`; []
        when a line between is not one of its items nor deeper."""
        body = self.body
        starts = []
        for low in _low(column).finditer(body, at, end):
            at = low.end()
            if at - low.start() <= column or body[at] != "-" or body[at + 1] not in " \t\r\n":
                return []
            starts.append(low.start() + 1)
        return starts

    def _seen_before(self, at: int, end: int, where: Path_) -> tuple[Any, int, int, int] | None:
        """(its first place, its line, its line breaks, the first place's line) when the text of
        the piece at `at:end` came before; else None, and the piece is remembered."""
        if end - at < SMALL and self.body.count("\n", at, end) <= 1:
            return None
        text = self.body[at:end]
        first = self.seen.get(text)
        line = self._line(at)
        if first is not None:
            return first[0], line, text.count("\n"), first[1]
        if self.kept > BUDGET:
            self.seen.clear()
            self.kept = 0
        self.seen[text] = (where, line)
        self.kept += len(text)
        return None

    def _stand_in(self, at: int, end: int, stand_in: str, breaks: int) -> None:
        self.pieces.append(self.body[self.done : at])
        self.pieces.append(stand_in + "\n" * breaks)
        self.done = end

    def finish(self, doc: Document, table: LineTable) -> tuple[Document, set[int]] | None:
        """The document with each stand-in replaced, and the ids of the parts put in more than
        one place; None when the parse did not cut where the plan did."""
        lines, data, prefix = table.lines, doc.data, self.prefix
        if any(lines.get((key,)) != line for key, line in self.top):
            return None
        samples = data.get("samples") if prefix and isinstance(data, dict) else data
        if not isinstance(samples, list) or len(samples) != self.samples:
            return None
        for path, size in self.sizes:  # each cut starts one key or item: no more, no fewer
            found = _at(samples, path)
            if found.__class__ is not (dict if len(path) == 1 else list) or len(found) != size:
                return None
        rows: Any = samples  # indexed by the steps of paths
        redirects: dict[Path_, tuple[Path_, int]] = {}  # a field that stood in → (its first place, lines between)
        shifted: dict[Path_, list[_Run]] = {}  # a list with items standing in → its runs
        repeated: set[int] = set()
        for s, key, runs in self.lists:  # before the fields: a field that stands in may hold such a list
            if not self._place_items(rows, s, key, runs, lines, repeated):
                return None
            shifted[prefix + (s, key)] = runs
        for where, line, first, moved in self.stand_ins:
            parent, path = rows[where[0]], prefix + where
            placed = parent[where[1]]
            if placed.__class__ is not int or placed != 0 or lines.get(path) != line:
                return None
            parent[where[1]] = value = rows[first[0]][first[1]]
            redirects[path] = (prefix + first, moved)
            repeated.add(id(value))
            if value.__class__ is list:
                repeated.update(id(item) for item in value)
        doc.lines = MemoLines(table, redirects, shifted, prefix) if redirects or shifted else table
        return doc, repeated

    def _place_items(self, rows: Any, s: int, key: str, runs: list[_Run], lines: dict[Path_, int], repeated: set[int]) -> bool:
        """The list `rows[s][key]` with each run's stand-in replaced by the items it stands for."""
        prefix, reduced = self.prefix, rows[s][key]
        items: list[Any] = []
        done = 0
        for run in runs:
            placed = reduced[run.at]
            if placed.__class__ is not int or placed != 0 or lines.get(prefix + (s, key, run.at)) != run.line:
                return False
            items += reduced[done : run.at]
            s0, key0, j0 = run.first
            part = (items if s0 == s and key0 == key else rows[s0][key0])[j0 : j0 + run.count]
            if len(part) != run.count:
                return False
            items += part
            repeated.update(id(item) for item in part)
            done = run.at + 1
        items += reduced[done:]
        rows[s][key] = items
        return True


def _at(samples: Any, path: Path_) -> Any:
    found: Any = samples
    for step in path:
        found = found[step]
    return found


class MemoLines:
    """The lines of a document read through the memo: a path inside a field that stood in for
    a repeated one is looked up at that field's first place, an item of a run that stood in at
    the item it repeats, each moved by the lines between; any other item of a list where a run
    stood in, at its index in the reduced text's list."""

    __slots__ = ("table", "redirects", "shifted", "prefix")

    def __init__(self, table: LineTable, redirects: dict[Path_, tuple[Path_, int]], shifted: dict[Path_, list[_Run]], prefix: Path_):
        self.table = table
        self.redirects = redirects
        self.shifted = shifted
        self.prefix = prefix

    def line(self, path: Path_) -> int | None:
        field, moved = len(self.prefix) + 2, 0  # a sample's field is this many steps deep
        while len(path) >= field:  # each step goes to an earlier place, or ends
            head = path[:field]
            found = self.redirects.get(head)
            if found is not None:  # a field that stood in
                path, moved = found[0] + path[field:], moved + found[1]
                continue
            runs = self.shifted.get(head) if len(path) > field else None
            if runs is None:
                break
            index, first, distance = _item_place(runs, path[field])
            if first is None:  # an item of the reduced text's list, or not an item
                path = (*head, index, *path[field + 1 :])
                break
            path, moved = self.prefix + first + path[field + 1 :], moved + distance
        line = self.table.line(path)
        return None if line is None else line + moved


def _item_place(runs: list[_Run], index: Any) -> tuple[Any, Path_ | None, int]:
    """Where item `index` of a list with runs is: (its index in the reduced text's list, None,
    0), or (None, the place of the item it repeats, the lines between)."""
    if index.__class__ is not int:
        return index, None, 0
    shrink = 0
    for run in runs:
        if index < run.index:
            break
        if index < run.index + run.count:
            first = run.first
            return None, (first[0], first[1], first[2] + index - run.index), run.moved
        shrink += run.count - 1
    return index - shrink, None, 0
