"""People's labels: `gold:` in a sample, or a labels file (`--gold FILE`, JSON Lines), read and
checked with located errors (`FILE:LINE: field: what is wrong`, exit 2).

A label is one rater's view of one sample's output: `score` for the rubric (1–5), `dimensions`
(name → 1–5), `pass` (true or false), `rater` (a name; several raters may label a sample). A line
whose fields are all empty (as `omk gold init` writes them) is not labelled yet and is skipped.
The file may also carry the `prompt` and `output` that `omk gold init` shows; they are not read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import InputError, Problem

LABEL_FIELDS = ("score", "dimensions", "pass")
SHOWN_FIELDS = ("prompt", "output")  # what `omk gold init` writes for the labeller to read
FILE_FIELDS = ("sample_id", "rater", *LABEL_FIELDS, *SHOWN_FIELDS)
SAMPLE_FIELDS = ("rater", *LABEL_FIELDS)
LOW, HIGH = 1.0, 5.0


class GoldLabel(msgspec.Struct, frozen=True, gc=False):
    sample_id: str
    rater: str | None = None
    score: float | None = None
    dimensions: Mapping[str, float] = msgspec.field(default_factory=dict)
    passed: bool | None = None

    @property
    def empty(self) -> bool:
        return self.score is None and not self.dimensions and self.passed is None

    def to_json(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "rater": self.rater, "score": self.score, "dimensions": dict(self.dimensions), "pass": self.passed}


def _score(value: Any, where: str, problems: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not LOW <= value <= HIGH:
        problems.append(f"{where}: expected a score from 1 to 5, found {json.dumps(value, ensure_ascii=False)[:40]}")
        return None
    return float(value)


def parse_label(data: Any, sample_id: str | None, allowed: tuple[str, ...]) -> tuple[GoldLabel | None, list[tuple[str, str]]]:
    """One label from its JSON object; problems as (field, message)."""
    if not isinstance(data, Mapping):
        return None, [("", f"a label must be an object with {', '.join(LABEL_FIELDS)}")]
    found: list[tuple[str, str]] = [(str(k), f'unknown field "{k}" (expected {", ".join(allowed)})') for k in data if k not in allowed]
    sid = sample_id if sample_id is not None else data.get("sample_id")
    if not isinstance(sid, str) or not sid:
        found.append(("sample_id", "required: the sample_id the label is for"))
    rater = data.get("rater")
    if rater is not None and not isinstance(rater, str):
        found.append(("rater", "expected a name (a string)"))
    msgs: list[str] = []
    score = _score(data.get("score"), "score", msgs)
    dims_raw = data.get("dimensions") or {}
    dims: dict[str, float] = {}
    if not isinstance(dims_raw, Mapping):
        found.append(("dimensions", "expected an object: dimension name -> score 1-5"))
    else:
        for name, value in dims_raw.items():
            got = _score(value, f"dimensions.{name}", msgs)
            if got is not None:
                dims[str(name)] = got
    passed = data.get("pass")
    if passed is not None and not isinstance(passed, bool):
        found.append(("pass", "expected true or false"))
    found += [tuple(m.split(": ", 1)) for m in msgs]  # type: ignore[misc]  # (field, message)
    if found:
        return None, found
    return GoldLabel(str(sid), rater, score, dims, passed), []


def read_labels_file(path: Path) -> list[GoldLabel]:
    """Every label in a JSON Lines file; all its problems at once as an InputError."""
    from omk.io.safe_files import UnsafeFile, read_regular_bytes, sample_file_cap

    try:  # a regular file of a sample file's size at most: not a FIFO, a device or /proc
        text = read_regular_bytes(path, sample_file_cap()).decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such labels file") from None
    except UnsafeFile as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    labels: list[GoldLabel] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), number, "", "", f"not valid JSON: {exc.msg}"))
            continue
        label, found = parse_label(data, None, FILE_FIELDS)
        problems += [Problem(str(path), number, "", f, m) for f, m in found]
        if label is not None and not label.empty:
            labels.append(label)
    if problems:
        raise InputError(problems)
    return labels


def labels_of_sample(sample_id: str, gold: Any) -> tuple[list[GoldLabel], list[tuple[str, str]]]:
    """The labels of a sample's `gold:` (one label, or a list of them, one per rater)."""
    items = gold if isinstance(gold, list) else [gold]
    labels: list[GoldLabel] = []
    problems: list[tuple[str, str]] = []
    for i, item in enumerate(items):
        label, found = parse_label(item, sample_id, SAMPLE_FIELDS)
        prefix = f"gold[{i}]" if isinstance(gold, list) else "gold"
        problems += [(f"{prefix}.{f}" if f else prefix, m) for f, m in found]
        if label is not None and not label.empty:
            labels.append(label)
    return labels, problems


def group(labels: Iterable[GoldLabel]) -> dict[str, list[GoldLabel]]:
    """Labels by sample; the same rater twice on a sample keeps the last (a file overrides `gold:`)."""
    found: dict[str, dict[str, GoldLabel]] = {}
    for n, label in enumerate(labels):
        key = label.rater if label.rater is not None else f"\0{n}"
        found.setdefault(label.sample_id, {})[key] = label
    return {sid: list(by_rater.values()) for sid, by_rater in found.items()}
