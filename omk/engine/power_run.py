"""`omk power RUN_DIR`: the power figures of a finished run or experiment, read from its folder.

An experiment's folder holds each variant's report (variants/<name>/report.json): every
treatment is compared with the control on the composite scores of the samples both scored. A
single run's figures are for a future comparison against it (omk/stats/power.py says how).
"""

from __future__ import annotations

from pathlib import Path

from omk.core.errors import InputError
from omk.records.document import ReportDocument, read_document
from omk.stats.power import PowerFigures, SpreadParts, paired_parts, single_parts

DEFAULT_EFFECT = 0.1  # the experiments' default trivial difference on the 1–5 composite


def composites(document: ReportDocument) -> dict[str, list[float]]:
    """Each sample's composite per repeat that ran and was scored, read one result at a time."""
    found: dict[str, list[float]] = {}
    for result in document.results:
        runs = found.setdefault(result.sample_id, [])
        if result.status == "ok" and result.scores.composite is not None:
            runs.append(float(result.scores.composite))
    return found


def power_of_run(run_dir: Path, effect: float | None = None, *, alpha: float = 0.05, power: float = 0.8) -> list[PowerFigures]:
    """Per treatment (or for the single run): the spread, what the run detects, and the samples
    and repeats a difference of `effect` needs. InputError when it has fewer than 2 scored samples."""
    from omk.engine.experiment_state import VARIANTS_DIR

    document = read_document(run_dir)
    block = document.experiment
    if block is None:
        chosen = effect if effect is not None else DEFAULT_EFFECT
        return [_figures(str(run_dir), None, single_parts(composites(document)), chosen, alpha, power, run_dir)]
    folder = run_dir if run_dir.is_dir() else run_dir.parent
    chosen = effect if effect is not None else float(block.settings.trivial or DEFAULT_EFFECT)
    rows = list(block.variants)
    control = next((v for v in rows if v.role == "control"), rows[0])
    scores = {v.name: composites(read_document(folder / VARIANTS_DIR / v.name)) for v in rows}
    return [
        _figures(v.name, control.name, paired_parts(scores[v.name], scores[control.name]), chosen, alpha, power, run_dir)
        for v in rows
        if v.name != control.name
    ]


def _figures(
    name: str, control: str | None, parts: SpreadParts | None, effect: float, alpha: float, power: float, run_dir: Path
) -> PowerFigures:
    if parts is None:
        raise InputError(f"{run_dir}: fewer than 2 scored samples{' on both ' + name + ' and ' + control if control else ''}: no spread to go by")
    return PowerFigures(name, control, parts, effect, alpha, power)
