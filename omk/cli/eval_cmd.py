"""`omk eval`: load → target → assert/judge → score → report, with exit codes per spec §1."""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import gc
import json
import secrets
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omk.cli.main import EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK
from omk.config import Settings, load_settings
from omk.errors import ConfigError, InputError
from omk.model import Sample, SampleResult
from omk.targets.base import Target


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def resolve_samples(paths: list[str], cwd: Path) -> list[Path]:
    from omk.loader import discover

    if paths:
        return [Path(p) for p in paths]
    found = discover(cwd)
    if not found:
        raise InputError(
            "no samples given and none found: looked for eval-samples.yaml, eval-samples.yml and "
            "eval-samples.json in the current directory and in ./evals/, then for the M365 names "
            "prompts.json, evals.json and tests.json in both (or pass prompts with --prompts)"
        )
    return found


def sample_paths(cli: dict[str, Any], cwd: Path) -> list[Path]:
    """The files to load: none for inline prompts (`--prompts`), else the given or discovered ones."""
    if cli.get("prompts"):
        if cli.get("samples"):
            raise InputError("give sample files or --prompts, not both")
        return []
    for option in ("expected", "evaluators"):
        if cli.get(option):
            raise InputError(f"--{option} goes with --prompts (inline prompts, as runevals takes them)")
    return resolve_samples(cli.get("samples") or [], cwd)


def load_inputs(cli: dict[str, Any], paths: list[Path], cwd: Path) -> Any:
    """`LoadedSamples` from the files, or from the command line's `--prompts` (omk.formats.inline)."""
    from omk.loader import LoadedSamples, load_samples

    if cli.get("prompts"):
        from omk.loader.formats.inline import inline_samples

        return LoadedSamples(samples=inline_samples(cli["prompts"], cli.get("expected"), cli.get("evaluators"), cwd))
    return load_samples(paths)


def select(samples: list[Sample], pattern: str | None) -> list[Sample]:
    if not pattern:
        return samples
    chosen = [s for s in samples if fnmatch.fnmatchcase(s.sample_id, pattern)]
    if not chosen:
        raise InputError(f"--filter {pattern!r} matches no sample_id")
    return chosen


def _needs_hooks(samples: list[Sample]) -> bool:
    def walk(specs: list) -> bool:
        return any(a.type == "custom" or walk(a.children) for a in specs)

    return any(walk(specs) for s in samples for specs in s.assertion_lists())


class ResultsStream:
    """`results.jsonl`: one line per finished sample, appended and flushed as it finishes."""

    def __init__(self, path: Path, fresh: bool = False):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._f = path.open("w" if fresh else "a", encoding="utf-8")  # a resume appends

    def write(self, result: SampleResult) -> None:
        self._f.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def build_target(settings: Settings) -> Target:
    from omk.targets import make_target

    if not settings.target:
        raise ConfigError("no target: pass --target KIND:ARG or set `target:` in omk.yaml")
    return make_target(settings.target, base_dir=settings.target_base, settings=settings.extra)


async def _execute(
    jobs: list[tuple[Sample, int]],
    settings: Settings,
    target: Target,
    judge: Any,
    on_result: Callable[[SampleResult], None],
    cache: Any = None,
) -> list[SampleResult]:
    """Run the (sample, repeat) pairs still to do; each result goes to `on_result` as it finishes."""
    from omk.inline import inline_urls
    from omk.judge import why_no_judge
    from omk.run.retry import RetryPolicy
    from omk.run.runner import RunConfig, run_jobs

    samples = list({id(s): s for s, _ in jobs}.values())
    await inline_urls(samples, settings)
    hooks = None
    if _needs_hooks(samples):
        from omk.assertions.hooks import HookRunner

        hooks = HookRunner(timeout_s=settings.hook_timeout, max_workers=settings.concurrency)  # a hung hook blocks only its own sample
    cfg = RunConfig(
        threshold=settings.threshold,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        regex_timeout=settings.regex_timeout,
        judge=judge,
        no_judge=why_no_judge(settings),
        hooks=hooks,
        retry=RetryPolicy(retries=settings.retries),
        cache=cache,
    )
    try:
        return await run_jobs(jobs, target, cfg, on_result=on_result)
    finally:
        await target.close()
        if judge is not None:
            await judge.close()
        if hooks is not None:
            await hooks.close()


def run_eval(args: argparse.Namespace) -> int:
    from omk.cache import open_cache
    from omk.judge import build_judge, why_no_judge
    from omk.report import check_formats, write_formats
    from omk.report.i18n import t
    from omk.report.json_report import build_report
    from omk.run import resume as rs
    from omk.run.progress import make_progress
    from omk.run.repeats import repeat_stats, repeat_summary, spent_cost
    from omk.scoring.summary import summarize

    targets = args.target if isinstance(args.target, list) else [args.target] if args.target else []
    if len(targets) > 1:  # --target A --target B: two runs and a pairwise comparison
        from omk.run.pairwise import run_pairwise

        return run_pairwise(args, targets)
    args.target = targets[0] if targets else None
    manifest = None
    if args.resume:
        run_dir = Path(args.resume).resolve()
        manifest = rs.read_manifest(run_dir)
        cli = rs.resume_cli(manifest, vars(args))
        cwd = _enter(Path(manifest["cwd"]))
        paths = [Path(p) for p in manifest["samples_files"]]
    else:
        cli = vars(args)
        cwd = Path.cwd()
        paths = sample_paths(cli, cwd)
    loaded = load_inputs(cli, paths, cwd)
    gc.freeze()  # the samples live as long as the run: the collector need not rescan them (bench/)
    settings = load_settings(paths, cwd, cli)
    samples = select(loaded.samples, cli.get("filter"))
    repeat = cli.get("repeat") or 1
    target = build_target(settings)
    judge = build_judge(settings)
    check_formats(settings.formats)
    if manifest is not None:
        run_id, started_at, out_dir = manifest["run_id"], manifest["started_at"], run_dir
        _same_target(manifest, target.describe(), run_dir)
    else:
        started = datetime.now(UTC)
        run_id, started_at = new_run_id(started), started.isoformat(timespec="seconds")
        out_dir = (Path(settings.out) if settings.out else cwd / ".omk" / "runs" / run_id).resolve()
        rs.write_manifest(
            out_dir,
            {
                "run_id": run_id,
                "started_at": started_at,
                "cwd": str(cwd),
                "samples_files": [str(p.resolve()) for p in paths],
                "cli": rs.recorded_cli(vars(args)),
                "settings": _public_settings(settings, repeat),
                "target": target.describe(),
                "judge": judge.describe() if judge is not None else None,
            },
        )
    plan = [(s, r) for s in samples for r in range(repeat)]
    by_id = {s.sample_id: s for s in samples}
    finished = rs.read_finished(out_dir / rs.RESULTS, by_id, repeat) if manifest is not None else rs.Finished()
    todo = [(s, r) for s, r in plan if (s.sample_id, r) not in finished.results]
    cache = open_cache() if not cli.get("no_cache") and target.cache_identity() is not None else None
    if judge is not None and not cli.get("no_cache"):
        judge.use_cache(cache)  # judge replies are cached too (their own file handle when the target has none)
    stream = ResultsStream(out_dir / rs.RESULTS, fresh=manifest is None)
    errors_before = sum(1 for r in finished.results.values() if r.status == "error")
    progress = make_progress(len(plan), len(finished.results), errors_before, quiet=args.quiet)

    def on_result(result: SampleResult) -> None:
        stream.write(result)
        progress.advance(result)

    t0 = time.perf_counter()
    interrupted = False
    fresh: list[SampleResult] = []
    try:
        with progress:
            fresh = asyncio.run(_execute(todo, settings, target, judge, on_result, cache))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stream.close()
        if cache is not None:
            cache.close()
    if interrupted:
        print(t("interrupted: the partial run is kept in {path}", settings.lang).format(path=out_dir), file=sys.stderr)
        print(t("resume it with: omk eval --resume {path}", settings.lang).format(path=out_dir), file=sys.stderr)
        return EXIT_INTERRUPTED
    done = {**finished.results, **{(r.sample.sample_id, r.repeat): r for r in fresh}}
    results = [done[(s.sample_id, r)] for s, r in plan]
    summary = summarize(results, settings.threshold, (time.perf_counter() - t0) * 1000)
    summary["cost_usd"] = spent_cost(results)  # cached results cost nothing this run
    summary["cached"] = sum(1 for r in results if r.cached)
    summary["judge_cost_usd"] = judge.spent_usd() if judge is not None else None  # apart from the target's cost_usd
    summary["skipped_judge_reason"] = why_no_judge(settings) if summary["skipped_judge_items"] else None
    summary["repeat"] = repeat
    report = build_report(
        run_id=run_id,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        samples_files=[str(f) for f in loaded.files],
        target=target.describe(),
        judge=judge.describe(results) if judge is not None else None,  # with agreement across samples
        summary=summary,
        results=results,
    )
    stats = repeat_stats(results) if repeat > 1 else []
    report["repeats"] = {**repeat_summary(stats, repeat), "per_sample": stats} if stats else None
    report_path = write_formats(out_dir, report, settings.formats, settings.lang)[0]
    if args.quiet:  # one plain line, without loading rich (~30 ms)
        verdict = "gate passed" if summary["gate_passed"] else "gate failed"
        from omk.cli.console import say

        say(f"{t(verdict, settings.lang)}: {summary['passed']}/{summary['total']} · {report_path}")
    else:
        from omk.cli.console import make_console
        from omk.report.terminal import print_summary

        console = make_console()
        print_summary(report, console, settings.lang, str(report_path))
        if stats:
            _print_repeats(report["repeats"], console)
    return EXIT_OK if summary["gate_passed"] else EXIT_GATE


def _enter(recorded_cwd: Path) -> Path:
    """Resume from the folder the run started in, so relative paths mean what they meant."""
    import os

    if recorded_cwd.is_dir():
        os.chdir(recorded_cwd)
        return recorded_cwd
    return Path.cwd()


def _same_target(manifest: dict[str, Any], describe: dict[str, Any], run_dir: Path) -> None:
    recorded = manifest.get("target")
    if recorded is not None and json.dumps(recorded, sort_keys=True) != json.dumps(describe, sort_keys=True, default=str):
        raise ConfigError(
            f"{run_dir / 'run.json'}: target: the run used {recorded.get('spec', recorded)!r} but it now resolves to "
            f"{describe.get('spec', describe)!r} (omk.yaml or the environment changed); start a new run instead"
        )


def _public_settings(settings: Settings, repeat: int) -> dict[str, Any]:
    """What run.json records of the settings: everything but provider blocks, which may hold keys."""
    return {
        "target": settings.target,
        "judge": settings.judge,
        "threshold": settings.threshold,
        "concurrency": settings.concurrency,
        "timeout": settings.timeout,
        "retries": settings.retries,
        "repeat": repeat,
        "formats": settings.formats,
        "lang": settings.lang,
        "config_file": str(settings.config_file) if settings.config_file else None,
    }


def _print_repeats(repeats: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    table = Table(title=f"Repeats ({repeats['n']} runs per sample)", title_justify="left")
    for col in ("sample", "pass rate", "composite mean", "stddev", "min", "max"):
        table.add_column(col, justify="left" if col == "sample" else "right")

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    for s in repeats["per_sample"]:
        c = s["composite"]
        table.add_row(
            s["sample_id"], f"{s['passed']}/{s['runs']}", fmt(c["mean"]), fmt(c["stddev"]), fmt(c["min"]), fmt(c["max"])
        )
    console.print(table)
    console.print(
        f"{repeats['always_passed']} of {repeats['samples']} samples passed every run, "
        f"{repeats['flaky']} flaky, {repeats['never_passed']} never passed"
    )
