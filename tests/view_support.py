"""Run folders for `omk view`'s tests: two runs of the same samples, one sample passing then failing."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_omk

EVIL = "<script>window.__pwned=1</script>"


def project(tmp_path: Path) -> Path:
    """Three samples; two recordings that differ on one of them (`b` passes, then fails)."""
    samples = [
        {"sample_id": "a", "prompt": "say hi", "assertions": [{"type": "contains", "value": "hi"}]},
        {"sample_id": "b", "prompt": "say yes", "assertions": [{"type": "contains", "value": "yes"}]},
        {"sample_id": EVIL, "prompt": "say ok", "assertions": [{"type": "contains", "value": "ok"}]},
    ]
    (tmp_path / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    for name, b in (("one.jsonl", "yes indeed"), ("two.jsonl", "no")):
        lines = [{"sample_id": "a", "output": "hi there"}, {"sample_id": "b", "output": b}, {"sample_id": EVIL, "output": "ok"}]
        (tmp_path / name).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return tmp_path


def runs(tmp_path: Path) -> Path:
    """Two runs of the same samples and target (`replay:responses.jsonl`), its recording changed between them."""
    folder = project(tmp_path)
    for i, replay in enumerate(("one.jsonl", "two.jsonl")):
        (folder / "responses.jsonl").write_text((folder / replay).read_text(encoding="utf-8"), encoding="utf-8")
        proc = run_omk(
            "eval", "eval-samples.json", "--target", "replay:responses.jsonl", "--no-judge", "--no-cache", "--format", "json,html", "--out", f".omk/runs/r{i}",
            cwd=folder, drop=(), columns=None, timeout=120,
        )  # fmt: skip
        assert proc.returncode in (0, 1), proc.stderr
    return folder / ".omk" / "runs"
