"""`replay:FILE`: recorded outputs, one `{"sample_id", "output", "trace"}` per JSON line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omk.errors import InputError, Problem
from omk.model import Sample
from omk.targets.base import TargetError, TargetResult
from omk.targets.trace_io import TraceFormatError, parse_trace


class ReplayTarget:
    def __init__(self, path: str | Path, spec: str | None = None):
        self.path = Path(path)
        self.spec = spec or f"replay:{path}"
        self._records = self._read()

    def _read(self) -> dict[str, tuple[int, dict[str, Any]]]:
        name = str(self.path)
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise InputError([Problem(name, None, "", "", "replay file not found")]) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError([Problem(name, None, "", "", f"cannot read replay file: {exc}")]) from None
        records: dict[str, tuple[int, dict[str, Any]]] = {}
        problems: list[Problem] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(name, lineno, "", "", f"invalid JSON: {exc.msg}"))
                continue
            if not isinstance(record, dict):
                problems.append(Problem(name, lineno, "", "", "each line must be a JSON object"))
                continue
            sid = record.get("sample_id")
            if not isinstance(sid, str) or not sid:
                problems.append(Problem(name, lineno, "", "sample_id", "must be a non-empty string"))
                continue
            if sid in records:
                first = records[sid][0]
                problems.append(Problem(name, lineno, "", "sample_id", f'"{sid}" recorded twice (first at line {first})'))
                continue
            output = record.get("output")
            if output is not None and not isinstance(output, str):
                problems.append(Problem(name, lineno, f"({sid})", "output", "must be a string"))
                continue
            try:
                parse_trace(record.get("trace"))
            except TraceFormatError as exc:
                problems.append(Problem(name, lineno, f"({sid})", "trace", str(exc)))
                continue
            records[sid] = (lineno, record)
        if problems:
            raise InputError(problems)
        return records

    def describe(self) -> dict[str, Any]:
        return {"kind": "replay", "spec": self.spec, "file": str(self.path)}

    async def run(self, sample: Sample, prompt: str) -> TargetResult:
        found = self._records.get(sample.sample_id)
        if found is None:
            raise TargetError(f"no recorded response for {sample.sample_id!r} in {self.path}")
        _, record = found
        if record.get("error"):
            raise TargetError(f"recorded error: {record['error']}")
        output = record.get("output")
        if output is None:
            raise TargetError(f"recorded response for {sample.sample_id!r} has no output")
        return TargetResult(output=output, trace=parse_trace(record.get("trace")))

    def cache_identity(self) -> None:
        return None

    async def close(self) -> None:
        return None
