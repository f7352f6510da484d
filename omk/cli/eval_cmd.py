"""`omk eval`: load → target → assert/judge → score → report, with exit codes per spec §1."""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import secrets
import sys
import time
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
            "eval-samples.json in the current directory and in ./evals/"
        )
    return found


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

    return any(walk(s.assertions) for s in samples)


class ResultsStream:
    """`results.jsonl`: one line per finished sample, appended and flushed as it finishes."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._f = path.open("a", encoding="utf-8")

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
    samples: list[Sample], settings: Settings, target: Target, judge: Any, stream: ResultsStream
) -> list[SampleResult]:
    from omk.inline import inline_urls
    from omk.run.runner import RunConfig, run_samples

    await inline_urls(samples, settings)
    hooks = None
    if _needs_hooks(samples):
        from omk.assertions.hooks import HookRunner

        hooks = HookRunner(timeout=settings.hook_timeout)
    cfg = RunConfig(
        threshold=settings.threshold,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        regex_timeout=settings.regex_timeout,
        judge=judge,
        hooks=hooks,
    )
    try:
        return await run_samples(samples, target, cfg, on_result=stream.write)
    finally:
        await target.close()
        if judge is not None:
            await judge.close()
        if hooks is not None:
            await hooks.close()


def run_eval(args: argparse.Namespace) -> int:
    from rich.console import Console

    from omk.judge import build_judge
    from omk.loader import load_samples
    from omk.report import check_formats, write_formats
    from omk.report.i18n import t
    from omk.report.json_report import build_report
    from omk.report.terminal import print_summary
    from omk.scoring.summary import summarize

    cwd = Path.cwd()
    paths = resolve_samples(args.samples, cwd)
    loaded = load_samples(paths)
    settings = load_settings(paths, cwd, vars(args))
    samples = select(loaded.samples, args.filter)
    target = build_target(settings)
    judge = build_judge(settings)
    check_formats(settings.formats)
    started = datetime.now(UTC)
    run_id = new_run_id(started)
    out_dir = Path(settings.out) if settings.out else cwd / ".omk" / "runs" / run_id
    stream = ResultsStream(out_dir / "results.jsonl")
    t0 = time.perf_counter()
    interrupted = False
    results: list[SampleResult] = []
    try:
        results = asyncio.run(_execute(samples, settings, target, judge, stream))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stream.close()
    if interrupted:
        print(t("interrupted: the partial run is kept in {path}", settings.lang).format(path=out_dir), file=sys.stderr)
        return EXIT_INTERRUPTED
    summary = summarize(results, settings.threshold, (time.perf_counter() - t0) * 1000)
    report = build_report(
        run_id=run_id,
        started_at=started.isoformat(timespec="seconds"),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        samples_files=[str(f) for f in loaded.files],
        target=target.describe(),
        judge=judge.describe() if judge is not None else None,
        summary=summary,
        results=results,
    )
    report_path = write_formats(out_dir, report, settings.formats, settings.lang)[0]
    console = Console(stderr=False, highlight=False)
    if args.quiet:
        verdict = "gate passed" if summary["gate_passed"] else "gate failed"
        console.print(f"{t(verdict, settings.lang)}: {summary['passed']}/{summary['total']} · {report_path}")
    else:
        print_summary(report, console, settings.lang, str(report_path))
    return EXIT_OK if summary["gate_passed"] else EXIT_GATE
