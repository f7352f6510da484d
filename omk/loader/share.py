"""Equal content loaded from sample files becomes one object.

A large suite repeats itself: the same assertions, the same JSON Schema, the same dimensions,
the same field names in every record of a JSON Lines file. The loader passes each sample
through the load's `Sharer` before checking it, so equal containers (equal as JSON text, key
order included: `1`, `1.0` and `true` stay apart) and equal strings become one object, and
what is derived from them once (a compiled regex or JSON Schema validator) is shared as well.
Shared data is read-only: nothing in omk writes into a sample's or an assertion's `raw` after
loading (a run that needs a changed sample builds a new dict).

A list of containers (a sample's assertions, turns or mocks) is not shared as a whole, only its
items: two samples rarely list exactly the same ones, and comparing whole lists would cost
more than it saves. The tables live for one load and are bounded: a full table starts over, so
a file of unique content costs no more than the table, and content that repeats is shared
again from its next occurrence.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]  # the C encoder, absent from the stubs
from typing import Any

import msgspec
from msgspec.structs import replace as _replace

from omk.loader.document import Path_
from omk.samples.model import AssertionSpec, SourceRef

LIMIT = 1 << 14  # entries per table
DEEP = 32  # containers nested deeper than this are kept as they are


class Sharer:
    """`data=False` leaves the samples' data as it is (data given by a program rather than read
    from a file may hold what JSON cannot tell apart, such as a tuple and a list)."""

    __slots__ = ("limit", "data", "_containers", "_strings", "_numbers", "_paths", "_prepared", "_specs", "_tuples", "checked", "fields", "_bases", "known_text")

    def __init__(self, limit: int = LIMIT, data: bool = True):
        self.limit = limit
        self.data = data
        self._containers: dict[str | bytes, Any] = {}
        self._strings: dict[str, str] = {}
        self.known_text = self._strings.get  # a string already shared (its one object), or None
        self._numbers: dict[float, float] = {}  # floats only: 1 == 1.0 == True in a dict
        self._paths: dict[Path_, Path_] = {}
        self._prepared: dict[int, tuple[Any, Any]] = {}  # id(raw) → (raw, what `prepare` made of it)
        self._specs: dict[tuple[int, Path_], AssertionSpec] = {}  # (id(raw), path in the sample) → spec
        self.checked: dict[int, tuple[Any, Any, bool]] = {}  # the validator's memo (omk.loader.validate.check_sample)
        self.fields: dict[tuple[str, int], tuple[Any, bool]] = {}  # its memo of the samples' own fields
        self._tuples: dict[int, tuple[Any, tuple[Any, ...]]] = {}  # id(list) → (list, its items as a tuple)
        self._bases: dict[Path_, list[Path_]] = {}  # a list's path → its items' paths (`specs_at`)

    def sample(self, raw: Any) -> Any:
        """A sample's mapping with its keys and values shared (the mapping itself is its own)."""
        if raw.__class__ is not dict or not self.data:
            return raw
        return {self.text(k): self.value(v, 1) for k, v in raw.items()}

    def items(self, value: Any) -> tuple[Any, ...]:
        """A list field's items as a tuple: one tuple for each shared list, () for none."""
        if value.__class__ is not list or not value:
            return ()
        found = self._tuples.get(id(value))
        if found is None:
            found = self._tuples[id(value)] = (value, tuple(value))  # the list is kept: its id stays its own
        return found[1]

    def text(self, value: str) -> str:
        found = self._strings.get(value)
        if found is not None:
            return found
        if len(self._strings) >= self.limit:
            self._strings.clear()
        self._strings[value] = value
        return value

    def path(self, path: Path_) -> Path_:
        """One tuple for each path inside a sample (`("assertions", 3)`), shared by every sample."""
        found = self._paths.get(path)
        if found is not None:
            return found
        if len(self._paths) >= self.limit:
            self._paths.clear()
        self._paths[path] = path
        return path

    def prepared(self, raw: dict[str, Any]) -> tuple[bool, Any]:
        """(True, compiled) when the `raw` object itself was prepared before in this load."""
        found = self._prepared.get(id(raw))
        if found is not None and found[0] is raw:
            return True, found[1]
        return False, None

    def remember(self, raw: dict[str, Any], compiled: Any) -> None:
        if len(self._prepared) >= self.limit:
            self._prepared.clear()
        self._prepared[id(raw)] = (raw, compiled)  # holding `raw` keeps its id from being reused

    def spec(self, raw: dict[str, Any], rel: Path_) -> AssertionSpec | None:
        """A spec built in this load from this very `raw` at this path in its sample, if any."""
        found = self._specs.get((id(raw), rel))
        return found if found is not None and found.raw is raw else None

    def placed(self, items: list[Any], base: Path_, origin: SourceRef) -> list[AssertionSpec | Path_]:
        """For each of `items` (the assertions of the list at `base` in the sample placed at
        `origin`): the spec built from this very dict at that path in this load, shared into
        this sample; or, when there is none, the item's path in the sample (to build it)."""
        paths = self._bases.get(base)
        if paths is None or len(paths) < len(items):
            if len(self._bases) >= self.limit:
                self._bases.clear()
            # The items' paths, made once per list path (for its longest list yet), not per sample.
            paths = self._bases[base] = [self.path(base + (i,)) for i in range(len(items))]
        specs = self._specs
        out: list[AssertionSpec | Path_] = []
        for raw, path in zip(items, paths, strict=False):  # `paths` may be longer (a longer list before)
            found = specs.get((id(raw), path))
            # What `AssertionSpec.share_with` makes (its core is marked shared when kept), inline.
            if found is not None and found.raw is raw:
                found._core.reused = True
                out.append(_replace(found, _origin=origin))
            else:
                out.append(path)
        return out

    def keep(self, spec: AssertionSpec, rel: Path_) -> None:
        spec.offer()  # later samples' specs are copies (`placed`)
        if len(self._specs) >= self.limit:
            self._specs.clear()
        self._specs[(id(spec.raw), rel)] = spec  # the spec holds `raw`, so its id is not reused

    def value(self, value: Any, depth: int) -> Any:
        """`value`, found `depth` containers deep in a sample, with its content shared."""
        cls = value.__class__
        if cls is str:
            return self.text(value)
        if (cls is dict or cls is list) and depth < DEEP:
            return self._container(value, depth)
        if cls is float:
            found = self._numbers.get(value)
            if found is not None and str(found) == str(value):  # not 0.0 for -0.0
                return found
            if len(self._numbers) >= self.limit:
                self._numbers.clear()
            self._numbers[value] = value
        return value

    def adopt(self, value: dict[str, Any]) -> Any:
        """A mapping (not nested deeper than `DEEP`) whose content is already shared: the one
        object of its content in this load, as `value` would make it."""
        key = _key(value)
        if key is None:
            return value
        found = self._containers.get(key)
        if found is not None:
            return found
        if len(self._containers) >= self.limit:
            self._containers.clear()
        self._containers[key] = value
        return value

    def _container(self, value: dict[str, Any] | list[Any], depth: int) -> Any:
        key = None
        if value.__class__ is dict or not any(v.__class__ is dict or v.__class__ is list for v in value):
            key = _key(value)
            found = self._containers.get(key) if key is not None else None
            if found is not None:
                return found
        text, share = self.text, self.value
        if value.__class__ is dict:  # a string value is shared here, without the call that tells its kind
            out: Any = {text(k): text(v) if v.__class__ is str else share(v, depth + 1) for k, v in value.items()}
        else:
            out = [text(v) if v.__class__ is str else share(v, depth + 1) for v in value]
        if key is not None:
            if len(self._containers) >= self.limit:
                self._containers.clear()
            self._containers[key] = out
        return out


def _refuse(value: Any) -> Any:
    raise TypeError(f"not JSON: {type(value).__name__}")


# The C encoder, made once (json.dumps makes one per call), compact, no circular check: a cycle
# ends in RecursionError, which `_key` takes as "no key".
_ENCODE = c_make_encoder(None, _refuse, encode_basestring_ascii, None, ":", ",", False, False, True) if c_make_encoder else None
_QUICK = msgspec.json.Encoder().encode
SHORT = 256  # a JSON text up to this long is its own key; a longer one is keyed by its digest
_NULL = b"null"


def _key(value: Any) -> str | bytes | None:
    """The content's compact JSON text (key order kept; `1`, `1.0` and `true` apart), or a
    digest of it; None for what has none (a cycle, what JSON cannot write).

    msgspec writes the text (several times faster than json's encoder), as bytes. It writes a
    float infinity or NaN as `null`, so a text with `null` anywhere in it is written again by
    json's encoder, which tells them apart; that text is kept as str (its digest under another
    name), so a key of one writer never meets a key of the other."""
    try:
        quick = _QUICK(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        quick = _NULL  # the careful writer decides
    if _NULL not in quick:
        return quick if len(quick) <= SHORT else hashlib.sha256(quick).digest()
    try:
        text = "".join(_ENCODE(value, 0)) if _ENCODE is not None else json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return text if len(text) <= SHORT else hashlib.sha256(b"json:" + text.encode("ascii")).digest()
