"""`omk gold init RUN_DIR`: a labels file to fill in, one line per sample the run judged or could
have judged (its first run), with the prompt and output shown and every label field empty. The
judge's own scores are left out, so they cannot sway the people."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from omk.io.jsontext import dumps
from omk.records import SampleResult


def template_lines(results: Iterable[SampleResult]) -> Iterator[str]:
    """One line per sample, made as the results are walked (none is kept)."""
    for r in results:
        if r.repeat != 0:
            continue
        dims = {name: None for name, _ in r.judge.dimensions} if r.judge is not None else {}
        entry = {
            "sample_id": r.sample_id,
            "rater": None,
            "score": None,
            "dimensions": dims,
            "pass": None,
            "prompt": r.prompt,
            "output": r.output if r.output is not None else (r.turns[-1].output if r.turns else None),
        }
        yield dumps(entry)
