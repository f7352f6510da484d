"""`omk merge`: the shards of a split run (`omk eval --shard I/N`) joined into one run folder.

The shards must be parts of one plan (the same fingerprint), each given once; a shard that is
missing is named by its number, and merging without it takes `--partial`, which the merged report
then says. The results are put back in the order an unsharded run has them (each shard's run.json
records its samples' places in the plan) and streamed: each shard's report.json is read one result
at a time into the merged results.jsonl, and the report files are written from that file, so
memory holds only each result's digest. An experiment's variants are merged one by one and its
statistics and verdict computed again over every pair, with the recorded seed.
"""

from __future__ import annotations

import heapq
import shlex
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from omk.core.errors import InputError
from omk.engine.results import Key, ResultLog, Results
from omk.engine.run_report import Report
from omk.records import SampleResult
from omk.records.document import ReportDocument
from omk.records.experiment_manifest import ExperimentManifest
from omk.records.judge_settings import JudgeSettings, RunAgreement
from omk.records.manifest import RunManifest
from omk.records.shard import ShardInfo, number_ranges
from omk.scoring.digest import Digest


class ShardRun(msgspec.Struct, frozen=True):
    folder: Path
    info: ShardInfo
    record: RunManifest | ExperimentManifest  # run.json, or experiment.json for an experiment
    experiment: bool


class MergeOptions(msgspec.Struct, frozen=True, gc=False):
    out: Path
    formats: tuple[str, ...] = ("json",)
    lang: str = "en"
    partial: bool = False
    require: str | None = None  # an experiment's policy; None: the one its shards recorded


def read_shard(folder: Path) -> ShardRun:
    """A shard's folder: its record and its `shard` block; an InputError when it is not a shard."""
    from omk.engine.variant_choice import MANIFEST, is_experiment
    from omk.runner.resume import read_manifest

    experiment = is_experiment(folder)
    record = ExperimentManifest.read_file(folder / MANIFEST) if experiment else read_manifest(folder)
    where = str(folder / (MANIFEST if experiment else "run.json"))
    info = record.shard
    if info is None or info.index is None:
        raise InputError(f"{where}: not a shard of a split run (it ran without --shard I/N)")
    return ShardRun(folder, info, record, experiment)


def check_shards(runs: Sequence[ShardRun], partial: bool) -> ShardInfo:
    """The merge's `shard` block, or an InputError of one line: shards of different plans or
    splits, a shard given twice, a shard missing (unless `partial`)."""
    first = runs[0]
    seen: dict[int, Path] = {}
    for run in runs:
        if run.experiment != first.experiment:
            raise InputError(f"{run.folder}: an experiment and a plain run cannot be merged ({first.folder} is not)")
        if run.info.count != first.info.count:
            raise InputError(f"{run.folder}: shard {run.info.index}/{run.info.count} is of another split than {first.folder} (shard {first.info.index}/{first.info.count})")
        if run.info.plan != first.info.plan:
            raise InputError(
                f"{run.folder}: shard {run.info.index}/{run.info.count} is of another plan than {first.folder}: the shards of one "
                "run share their samples, settings, targets and seed"
            )
        assert run.info.index is not None
        if run.info.index in seen:
            raise InputError(f"shard {run.info.index}/{run.info.count} given twice: {seen[run.info.index]} and {run.folder}")
        seen[run.info.index] = run.folder
    count = first.info.count  # at most MAX_SHARDS: a report with more is refused when it is read
    missing = tuple(i for i in range(1, count + 1) if i not in seen)
    if missing and not partial:
        numbers = number_ranges(missing)
        raise InputError(f"shard{'s' if len(missing) > 1 else ''} {numbers} of {count} missing; give every shard, or --partial to merge only these")
    return ShardInfo(count, first.info.plan, None, tuple(sorted(seen)), missing)


def merge_plain(folders: Sequence[Path], info: ShardInfo, out: Path, options: MergeOptions) -> tuple[Report, ResultLog]:
    """One run folder from the shards' folders (in shard order): results.jsonl, report.json and the
    other formats; the merged log is returned for the digests an experiment's block reads."""
    from omk.records.document import read_document
    from omk.runner.resume import RESULTS, read_manifest

    manifests = [read_manifest(f) for f in folders]
    same_settings(folders, manifests)
    docs = [read_document(f) for f in folders]
    streams = [_placed(doc, m, f) for doc, m, f in zip(docs, manifests, folders, strict=True)]
    log = ResultLog((), out / RESULTS)
    log.open(fresh=True)
    try:
        for _, result in heapq.merge(*streams, key=lambda placed: placed[0]):
            log.add(result)
    finally:
        log.close()
    keys = list(log.digests)
    variant_info = msgspec.structs.replace(info, plan=manifests[0].shard.plan if manifests[0].shard is not None else info.plan)
    report = _report(docs, manifests, log, keys, variant_info, out, options.lang)
    report.judge = judge_block(docs[0].judge, [log.digests[k] for k in keys])
    report.gold = gold_block(docs, manifests, folders, Results(log, keys), out)
    report.write(options.formats)
    return report, log


def _placed(doc: ReportDocument, manifest: RunManifest, folder: Path) -> Iterator[tuple[tuple[int, int], SampleResult]]:
    """A shard's results, each with its place in the whole plan (sample, then repeat)."""
    positions = list(manifest.positions)
    repeat = manifest.settings.repeat
    if doc.summary.total != len(positions) * repeat:
        raise InputError(f"{folder}: the shard's report holds {doc.summary.total} results of {len(positions) * repeat}; finish it first (omk eval --resume {shlex.quote(str(folder))})")
    places = iter(positions)
    current: str | None = None
    place = -1
    for result in doc.results:
        if result.sample_id != current:
            current, place = result.sample_id, next(places, -1)
        yield (place, result.repeat), result


def _report(docs: list[ReportDocument], manifests: list[RunManifest], log: ResultLog, keys: list[Key], info: ShardInfo, out: Path, lang: str) -> Report:
    from omk.engine.finish import repeats_block
    from omk.engine.state import new_run_id
    from omk.runner.repeats import spent_cost
    from omk.scoring.summary import summarize
    from omk.scoring.triggering import triggering

    digests = [log.digests[k] for k in keys]
    settings = manifests[0].settings
    repeat = settings.repeat
    durations = [d.summary.duration_ms for d in docs if d.summary.duration_ms is not None]
    judge_costs = [d.summary.judge_cost_usd for d in docs if d.summary.judge_cost_usd is not None]
    summary = msgspec.structs.replace(
        summarize(digests, float(settings.threshold), max(durations, default=0.0)),
        cost_usd=spent_cost(digests),
        cached=sum(1 for d in digests if d.cached),
        judge_cost_usd=round(sum(judge_costs), 6) if judge_costs else None,
        skipped_judge_reason=next((d.summary.skipped_judge_reason for d in docs if d.summary.skipped_judge_reason), None),
        repeat=repeat,
    )
    now = datetime.now(UTC)
    installed = docs[0].triggering.installed if docs[0].triggering is not None else None
    warnings = list(dict.fromkeys(w for d in docs for w in d.warnings))
    if info.partial:
        warnings.insert(0, f"{info.label()}: the results, summary and verdict cover only the shards merged")
    return Report(
        run_id=new_run_id(now),
        started_at=min((d.started_at for d in docs if d.started_at), default=now.isoformat(timespec="seconds")),
        finished_at=now.isoformat(timespec="seconds"),
        samples_files=list(docs[0].samples_files),
        target=docs[0].target,
        judge=None,  # the judge's block and its check against people's labels: merge_plain sets them
        summary=summary,
        results=Results(log, keys),
        repeats=repeats_block(digests, repeat),
        out_dir=out,
        lang=lang,
        warnings=warnings,
        triggering=triggering([case for d in digests for case in d.triggers], installed),
        shard=info,
    )


def same_settings(folders: Sequence[Path], manifests: list[RunManifest]) -> None:
    """An InputError of one line when the shards' target or judge differ in anything that shapes a
    result (the model's parameters, the system prompt, the judges' prompts, language, length
    debiasing, repeats: run.json's `target` and `judge`), or were checked against other labels
    files: the plan's fingerprint covers the target's and the judges' specs, not their settings."""
    first = manifests[0]
    for folder, manifest in zip(folders[1:], manifests[1:], strict=True):
        for name in ("target", "judge"):
            if getattr(manifest, name) != getattr(first, name):
                raise InputError(f"{folder}: this shard ran with other {name} settings than {folders[0]} (run.json's {name}); the shards of one run share their {name}")
        if manifest.gold_files != first.gold_files:
            raise InputError(f"{folder}: this shard checked its judge against other labels files (--gold) than {folders[0]}")


def judge_block(block: JudgeSettings | None, digests: Sequence[Digest]) -> JudgeSettings | None:
    """The merged report's `judge`: the shards' judge settings (the same in every shard), and for
    an ensemble its agreement across samples computed again over every shard's samples (each
    shard's report has its own samples' agreement only)."""
    if block is None or not block.ensemble:
        return block
    from omk.judge.agreement import run_agreement

    rows = [[by_spec.get(s) for s in block.models] for d in digests for by_spec in d.judge_scores]
    return msgspec.structs.replace(block, agreement=RunAgreement.of(run_agreement(list(block.models), rows)))


def gold_block(docs: Sequence[ReportDocument], manifests: list[RunManifest], folders: Sequence[Path], results: Results, out: Path) -> Any:
    """The judge against people's labels over every shard's samples, when the shards checked it:
    the labels the samples carry (copied into their results) and the `--gold` files the shards
    were given (read again, from where the merge runs, as the shards read them from where they ran)."""
    if all(d.gold is None for d in docs):
        return None
    from omk.gold import CheckSettings, check_results

    files = [Path(f) for f in manifests[0].gold_files]
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise InputError(f"{missing[0]}: the labels file the shards were given (--gold) is not here; run omk merge where the shards ran (the same checkout)")
    threshold = float(manifests[0].settings.threshold)
    judges = list(docs[0].judge_models or ())
    return check_results(list(results), judges, files, CheckSettings(threshold=threshold, seed=0), str(out))
