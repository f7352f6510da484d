"""`omk` command line. Heavy modules are imported inside the commands so `omk --help` stays fast."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from omk.settings.spec import CONCURRENCY as _concurrency  # the ranges are the spec's (omk/settings/spec.py)
from omk.settings.spec import DIFFERENCE as _difference
from omk.settings.spec import REPEATS as _repeats
from omk.settings.spec import SECONDS as _seconds
from omk.settings.spec import SEED as _seed
from omk.settings.spec import USD as _usd
from omk.settings.spec import Number
from omk.version import __version__

EXIT_OK, EXIT_GATE, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_INCOMPLETE = 3  # the budget stopped the run before every sample ran: resume it with --resume
ERROR_LINES = 20  # input problems printed before "… and N more" (`--all-errors` prints them all)
_count = Number(True, 0, 10_000)  # drafted trigger probes or tasks
_limit = Number(True, 1, 1_000_000)  # samples recorded from sessions
_port = Number(True, 0, 65_535)
_rounds = Number(True, 1, 100)  # evolve's rounds, and candidates a round


class _Parser(argparse.ArgumentParser):
    """argparse, whose refusals are one line (the usage is for `--help`); its subcommands too."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="omk",
        description="Evaluate LLM prompts, skills and agents against sample files.",
    )
    parser.add_argument("--version", action="version", version=f"omk {__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")  # each one a _Parser: one-line refusals
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]", subcommands)
    _add_eval(sub)
    _add_other_commands(sub)
    return parser


def _add_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ev = sub.add_parser("eval", help="run samples through a target, check and score the outputs")
    ev.add_argument("samples", nargs="*", help="sample files or folders (default: discover eval-samples.*)")
    from omk.settings.flags import add_flags, groups

    add_flags(ev)  # every setting with a flag, from the spec (omk/settings/spec.py)
    ev.add_argument("--all-errors", action="store_true", help=f"print every input problem (default: the first {ERROR_LINES} and a count)")
    for group in groups():
        add_flags(ev, group)


def _add_power(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pwr = sub.add_parser("power", help="how many samples and repeats a difference needs, from a finished run's spread")
    pwr.add_argument("run_dir", metavar="RUN_DIR", help="a run or experiment folder (or its report.json)")
    pwr.add_argument("--effect", type=_difference, metavar="D", help="the composite difference to detect (default: the experiment's trivial, else 0.1)")
    pwr.add_argument("--json", action="store_true", help="machine-readable output")
    pwr.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the text")


def _add_other_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doc = sub.add_parser("doctor", help="validate a sample set and report what it covers")
    doc.add_argument("samples", nargs="*", help="sample files or folders (default: discover eval-samples.*)")
    doc.add_argument("--json", action="store_true", help="machine-readable output")
    doc.add_argument("--lang", choices=["en", "zh"], default="en")
    doc.add_argument("--report", metavar="REPORT_JSON", help="also diagnose a finished run (report.json or its folder)")
    doc.add_argument("--strict", action="store_true", help="exit 1 on warnings too")

    rep = sub.add_parser("report", help="re-render a finished run's report.json in other formats")
    rep.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (or its report.json)")
    rep.add_argument("--format", default="html", help="formats, comma-separated: json, junit, md, html (default html)")
    rep.add_argument("--out", metavar="DIR", help="where to write (default: RUN_DIR)")
    rep.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the report text")

    mig = sub.add_parser("migrate", help="upgrade a legacy M365 eval dataset (a bare array) to the versioned shape")
    mig.add_argument("file", metavar="FILE", help="the M365 eval document to upgrade in place (a timestamped backup is written first)")

    init = sub.add_parser("init", help="write a starter eval-samples.yaml and omk.yaml")
    init.add_argument("dir", nargs="?", default=".", help="folder to write into (default: .)")
    init.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed")

    ver = sub.add_parser("verdict", help="print an experiment's verdict again (from its run folder)")
    ver.add_argument("run_dir", metavar="RUN_DIR", help="an experiment's run folder (or its report.json)")
    ver.add_argument("--require", choices=["progress", "no-regress"], help="exit 1 when the verdict does not meet it")
    ver.add_argument("--json", action="store_true", help="the experiment block as JSON")
    ver.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed")

    _add_power(sub)

    srv = sub.add_parser("serve-model", help="a scripted model on 127.0.0.1 (Anthropic, Chat Completions, Responses) for offline dry runs")
    srv.add_argument("script", metavar="SCRIPT", help="the script: which tool calls to make and what to answer, per prompt pattern")
    srv.add_argument("--port", type=_port, default=8642, help="the port to listen on (default 8642; 0: any free port)")
    srv.add_argument("--record", metavar="FILE", help="append every request to FILE, one JSON object a line")

    view = sub.add_parser("view", help="a local, read-only page over run folders: runs, trends, comparisons, a sample's history")
    view.add_argument("runs", nargs="*", help="run folders, or folders of run folders (default .omk/runs and .omk/evolve)")
    view.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one)")
    view.add_argument("--export", metavar="DIR", help="write the pages as static files into DIR instead of serving them")
    view.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the pages and the lines printed")
    mrg = sub.add_parser("merge", help="join the shards of a split run (omk eval --shard I/N) into one run folder")
    mrg.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="the shards' run folders")
    mrg.add_argument("--out", required=True, metavar="DIR", help="the merged run folder")
    mrg.add_argument("--format", help="report formats, comma-separated (json is always written)")
    mrg.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the report text")
    mrg.add_argument("--partial", action="store_true", help="merge even when shards are missing (the report says which)")
    mrg.add_argument("--require", choices=["progress", "no-regress"], help="an experiment: exit 1 when the merged verdict does not meet it")
    mrg.add_argument("--quiet", action="store_true", help="print only the final verdict line")
    _add_gold(sub)
    _add_sample(sub)
    _add_evolve(sub)
    _add_observe(sub)

    dif = sub.add_parser("diff", help="what changed, sample by sample, between two runs")
    dif.add_argument("run_a", metavar="RUN_A", help="the earlier run folder (or report.json), e.g. main's")
    dif.add_argument("run_b", metavar="RUN_B", help="the later run folder (or report.json), e.g. the pull request's")
    dif.add_argument("--trivial", type=_difference, default=0.1, metavar="X", help="score changes below X are not listed (default 0.1)")
    dif.add_argument("--json", action="store_true", help="machine-readable output")
    dif.add_argument("--fail-on-regression", action="store_true", help="exit 1 when a sample got worse")
    dif.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed")


def _add_sample(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    smp = sub.add_parser(
        "sample",
        help="write samples: drafted by a model from a skill (SKILL_DIR), recorded from a run (--from-run) or from sessions (--from-session)",
        description="Give SKILL_DIR (a model drafts samples from the skill), --from-run RUN_DIR or --from-session [PATH...], one of them.",
    )
    smp.add_argument("skill_dir", nargs="?", metavar="SKILL_DIR", help="a skill folder (with SKILL.md): a model drafts trigger probes and task samples from it")
    smp.add_argument("--from-run", metavar="RUN_DIR", help="a run folder (or its report.json) to record from")
    smp.add_argument("--from-session", nargs="*", metavar="PATH",
                     help="Claude Code and Codex session files or folders to record from (none: this project's sessions of both CLIs)")
    smp.add_argument("--project", metavar="DIR", help="--from-session: the project whose sessions to read (default: the current folder; with PATH: those of PATH in DIR)")
    smp.add_argument("--since", metavar="DATE", help="--from-session: only requests from DATE on (YYYY-MM-DD, or an ISO 8601 time)")
    smp.add_argument("--skill", metavar="NAME", help="--from-session: only the requests in which skill NAME fired")
    smp.add_argument("--limit", type=_limit, metavar="N", help="--from-session: at most N samples")
    smp.add_argument("--output", metavar="FILE", help="write the samples here (default: print them)")
    smp.add_argument("--target", metavar="KIND:ARG", help="SKILL_DIR: the model that drafts (openai:, anthropic:, cmd:; default: omk.yaml's target)")
    smp.add_argument("-n", type=_repeats, metavar="N", help="SKILL_DIR: samples to draft in all (default 10, half trigger probes, half tasks)")
    smp.add_argument("--triggers", type=_count, metavar="N", help="SKILL_DIR: trigger probes (should-fire and near-miss prompts) to draft")
    smp.add_argument("--tasks", type=_count, metavar="N", help="SKILL_DIR: task samples (prompt, mocks, rubric, checks) to draft")
    smp.add_argument("--append", action="store_true", help="SKILL_DIR: add the samples at the end of --output FILE, which must exist")
    smp.add_argument("--concurrency", type=_concurrency, default=4, help="SKILL_DIR: model calls in flight at once (default 4)")
    smp.add_argument("--timeout", type=_seconds, metavar="SECONDS", help="SKILL_DIR: per model call (default: omk.yaml's timeout, else 120)")
    smp.add_argument("--lang", choices=["en", "zh"], help="language of the lines the command prints (default: omk.yaml's lang when drafting, else en)")


def _add_evolve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evo = sub.add_parser("evolve", help="improve a skill with an improver model, accepting only changes that are significantly better (docs/evolve.md)")
    evo.add_argument("skill_dir", metavar="SKILL_DIR", help="the skill folder (with SKILL.md); never edited in place")
    evo.add_argument("samples", nargs="*", help="sample files or folders (default: discover eval-samples.*)")
    evo.add_argument("--improver", required=True, metavar="SPEC", help="the model that proposes candidates: openai:, anthropic: or cmd:")
    evo.add_argument("--target", metavar="KIND:ARG", help="the agent or model the skill runs with (default: omk.yaml's target)")
    evo.add_argument("--focus", choices=["description", "body", "both"], default="both", help="what the candidates may change (default both)")
    evo.add_argument("--rounds", type=_rounds, default=3, metavar="R", help="rounds at most (default 3)")
    evo.add_argument("--candidates", type=_rounds, default=4, metavar="K", help="candidates per round (default 4)")
    evo.add_argument("--split", default="50/25/25", metavar="TRAIN/SELECT/TEST", help="the shares of the split (default 50/25/25)")
    evo.add_argument("--repeat", type=_repeats, metavar="N", help="run each sample N times")
    evo.add_argument("--seed", type=_seed, default=0, metavar="N", help="the split's seed (default 0)")
    evo.add_argument("--out", metavar="DIR", help="the output folder (default .omk/evolve/<id>/)")
    evo.add_argument("--dry-run", action="store_true", help="print the calls, tokens and cost of the whole loop; call nothing")
    evo.add_argument("--budget-usd", type=_usd, metavar="X", help="start no paid step once X dollars are spent; exit 3 (the same command resumes)")
    evo.add_argument("--write", action="store_true", help="copy the selected SKILL.md over the original when the final check says PROGRESS")
    evo.add_argument("--json", action="store_true", help="print the report as JSON")
    evo.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed and of report.md and report.html")


def _add_observe(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    obs = sub.add_parser(
        "observe",
        help="how skills fire in the Claude Code and Codex sessions on disk: rates, failures after firing, candidate missed and false triggers",
        description="Sessions are only read, and nothing leaves the machine: the similarity that ranks the candidates is computed locally (docs/skills.md).",
    )
    obs.add_argument("paths", nargs="*", metavar="PATH", help="session files or folders of them (default: where Claude Code and Codex keep sessions)")
    obs.add_argument("--since", metavar="DATE", help="only requests from DATE on (YYYY-MM-DD, or an ISO 8601 time)")
    obs.add_argument("--skills", action="append", metavar="DIR", help="a skill folder or a folder of skill folders (repeatable; default: the projects' and the user's installed skills)")
    obs.add_argument("--limit", type=_count, default=10, metavar="N", help="candidates of each kind listed per skill (default 10)")
    obs.add_argument("--json", action="store_true", help="the report as JSON (format omk-observe/1)")
    obs.add_argument("--write-probes", metavar="FILE", help="write the candidates as trigger probes (omk YAML samples) to review")
    obs.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the report text")


def _add_gold(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gold = sub.add_parser("gold", help="check the judge against people's labels (docs/judge.md)")
    gold_sub = gold.add_subparsers(dest="gold_command", metavar="check|init", required=True)
    chk = gold_sub.add_parser("check", help="Krippendorff's alpha, Cohen's kappa and bias of the run's judge against people")
    chk.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (or its report.json)")
    chk.add_argument("--gold", action="append", metavar="FILE", help="a labels file (JSON Lines; repeatable), besides the samples' gold:")
    chk.add_argument("--json", action="store_true", help="the check as JSON (report.json's gold block)")
    chk.add_argument("--level", choices=["interval", "ordinal"], default="interval", help="alpha's measurement level (default interval)")
    chk.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed")
    ini = gold_sub.add_parser("init", help="write a labels file to fill in from a run's samples and outputs")
    ini.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (or its report.json)")
    ini.add_argument("--out", metavar="FILE", help="write here (default: print)")
    ini.add_argument("--force", action="store_true", help="replace FILE when it exists")
    ini.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the lines printed")


# command -> "module:function"; each module is imported only when its command runs
COMMANDS = {
    "eval": "omk.cli.eval_cmd:run_eval",
    "doctor": "omk.cli.doctor_cmd:run_doctor",
    "report": "omk.cli.report_cmd:run_report",
    "migrate": "omk.cli.migrate_cmd:run_migrate",
    "init": "omk.cli.init_cmd:run_init",
    "verdict": "omk.cli.experiment_cmd:run_verdict",
    "diff": "omk.cli.experiment_cmd:run_diff",
    "merge": "omk.cli.merge_cmd:run_merge",
    "serve-model": "omk.cli.serve_cmd:run_serve_model",
    "view": "omk.cli.view_cmd:run_view",
    "power": "omk.cli.power_cmd:run_power",
    "gold": "omk.cli.gold_cmd:run_gold",
    "sample": "omk.cli.sample_cmd:run_sample",
    "evolve": "omk.cli.evolve_cmd:run_evolve",
    "observe": "omk.cli.observe_cmd:run_observe",
}


def main(argv: Sequence[str] | None = None) -> int:
    # A run holds tens of thousands of small long-lived objects (samples, results): at the default
    # threshold (700) the young collections rescan them again and again, and a large run spends a
    # good part of its time in the collector (docs/benchmarks.md).
    gc.set_threshold(50_000, 20, 100)
    # httpx imports its own command-line client (click, pygments, rich) whenever those
    # happen to be installed, and omk never runs it. Blocking that one optional import in the omk
    # process makes httpx keep its stub `main`; omk imported as a library changes nothing.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None here is how Python blocks an import; typeshed allows only modules
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    from omk.core.errors import OmkError

    try:
        module, _, name = COMMANDS[args.command].partition(":")
        from importlib import import_module

        return getattr(import_module(module), name)(args)
    except OmkError as exc:
        print_problems(str(exc).split("\n"), all_errors=getattr(args, "all_errors", False))
        return exc.exit_code
    except KeyboardInterrupt:
        print("omk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `omk … | head`: the reader left; nothing more to say
        # Python's documented recipe: point stdout at devnull so the final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def print_problems(lines: list[str], *, all_errors: bool = False) -> None:
    """One line per problem on stderr, `FILE:LINE: where field: what` (control characters escaped);
    past ERROR_LINES, a count and how to see the rest, unless `all_errors`."""
    from omk.io.textsafe import for_terminal

    shown = lines if all_errors or len(lines) <= ERROR_LINES + 1 else lines[:ERROR_LINES]
    out = [for_terminal(line) for line in shown]
    if len(shown) < len(lines):
        more = len(lines) - len(shown)
        out.append(f"… and {more} more {'problem' if more == 1 else 'problems'} ({len(lines)} in all; --all-errors prints every one)")
    print("\n".join(out), file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
