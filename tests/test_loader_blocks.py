"""Samples are checked and built a block at a time (omk.loader `_FileLoader._samples`): whatever
the size of a block, a load finds the same problems in the same order, the same warnings, and
the same samples, as one sample at a time does."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

import omk.loader as loader_module
from omk.core.errors import InputError
from omk.loader import load_samples

FINE = {"type": "contains", "value": "ok"}


def samples(seed: int, count: int) -> list[dict[str, Any]]:
    """Samples with every kind of problem a block mixes: repeated ids (in and across blocks),
    unknown fields (warnings), a bad regex (built, then refused), a missing prompt, a missing hook
    file, a bad value, between fine ones."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(count):
        item: dict[str, Any] = {"sample_id": f"s{rng.randrange(count)}" if rng.random() < 0.1 else f"s{i}", "prompt": f"p{i}"}
        kind = rng.randrange(8)
        if kind == 0:
            item["promt"] = "typo"  # unknown: a warning
        elif kind == 1:
            item["assertions"] = [FINE, {"type": "regex", "pattern": "("}]
        elif kind == 2:
            del item["prompt"]
        elif kind == 3:
            item["assertions"] = [{"type": "custom", "fn": "hooks/missing.py:check"}]
        elif kind == 4:
            item["assertions"] = [FINE, {"type": "max_length", "value": "lots"}]
        else:
            item["assertions"] = [FINE, {"type": "regex", "pattern": f"ok{i % 3}"}]
        out.append(item)
    return out


def outcome(path: Path, strict: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(the problem lines, the warning lines, the ids of the samples built)."""
    try:
        loaded = load_samples([path], strict=strict)
    except InputError as exc:
        return [str(p) for p in exc.problems], [], []
    return [], [str(w) for w in loaded.warnings], [s.sample_id for s in loaded.samples]


def write(folder: Path, suffix: str, items: list[dict[str, Any]]) -> Path:
    path = folder / f"eval-samples{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(s) + "\n" for s in items), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps({"samples": items}, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump({"samples": items}, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".yaml"])
@pytest.mark.parametrize("seed", range(3))
def test_any_block_size_loads_as_one_sample_at_a_time(tmp_path, monkeypatch, suffix, seed):
    items = samples(seed, 120)
    path = write(tmp_path, suffix, items)
    monkeypatch.setattr(loader_module, "BLOCK", 1)
    alone = outcome(path)
    assert alone[0]
    assert any("duplicate sample_id" in line for line in alone[0])  # the mix has problems of every step
    for block, block_bytes in [(7, loader_module.BLOCK_BYTES), (1024, loader_module.BLOCK_BYTES), (1024, 500)]:
        monkeypatch.setattr(loader_module, "BLOCK", block)
        monkeypatch.setattr(loader_module, "BLOCK_BYTES", block_bytes)
        assert outcome(path) == alone, (block, block_bytes)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_clean_set_loads_the_same_samples_in_any_block_size(tmp_path, monkeypatch, suffix):
    items = [{"sample_id": f"s{i}", "prompt": f"p{i}", "x-note": "n", "assertions": [FINE]} for i in range(50)]
    path = write(tmp_path, suffix, items)
    monkeypatch.setattr(loader_module, "BLOCK", 1)
    alone = outcome(path)
    assert alone[2] == [f"s{i}" for i in range(50)]
    assert not alone[0]
    for block, block_bytes in [(3, loader_module.BLOCK_BYTES), (1024, 200)]:
        monkeypatch.setattr(loader_module, "BLOCK", block)
        monkeypatch.setattr(loader_module, "BLOCK_BYTES", block_bytes)
        assert outcome(path) == alone
