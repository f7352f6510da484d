"""The report corpus of tests/test_report_golden.py: report.json files of real runs (and a few
built ones) with every format rendered from them, committed under tests/fixtures/reports/.

The writers must render each of these byte for byte as committed. Rebuild the corpus only when a
format is meant to change (and read the diff):

    .venv/bin/python tests/report_corpus.py            # re-render the expected outputs
    .venv/bin/python tests/report_corpus.py --runs     # also run the scenarios again (new run ids)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "reports"
LANGS = ("en", "zh")

# A judge for the corpus runs: scores and reasons derived from the prompt (so stable), HTML and
# pipes in its reasons; with two targets, it prefers the answer that names Ana.
JUDGE = """\
import hashlib, json, sys
request = json.loads(sys.stdin.readline())
prompt = request["prompt"]
if "## Answer of assistant B" in prompt:
    first = prompt.split("## Answer of assistant B")[0]
    print(json.dumps({"output": json.dumps({"reason": "greets | by name <b>", "preference": 1 if "Ana" in first else 2})}))
else:
    n = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    reply = {"reasoning": "checked", "score": 2 + n % 4, "reason": "reason <i>%d</i> | 理由" % (n % 97)}
    print(json.dumps({"output": json.dumps(reply), "cost_usd": 0.0001}))
"""

TWO_TARGETS = {
    "eval-samples.yaml": "- sample_id: greet\n  prompt: hi\n  assertions: [{type: contains, value: hi}]\n"
    "- sample_id: 问候\n  prompt: 你好\n  assertions: [{type: contains, value: hi}]\n",
    "x.jsonl": '{"sample_id": "greet", "output": "hi Ana"}\n{"sample_id": "问候", "output": "hi 你好"}\n',
    "y.jsonl": '{"sample_id": "greet", "output": "hi"}\n{"sample_id": "问候", "output": "hi from y"}\n',
}

# name -> omk eval arguments (run from the repository root; `judge.py` is the judge above)
RUNS: dict[str, list[str]] = {
    "bundled": ["samples/eval-samples.yaml"],
    "replay-failing": ["samples/eval-samples.yaml", "--target", "replay:samples/responses.jsonl", "--threshold", "4.5"],
    "judged": ["samples/eval-samples.yaml", "--judge", "cmd:{python} {judge}"],
    "repeats": ["samples/eval-samples.yaml", "--target", "replay:samples/responses.jsonl", "--repeat", "2", "--threshold", "4.5"],
    "m365": ["samples/m365/evals.json", "--judge", "cmd:{python} {judge}"],
    "bigsky": ["samples/bigsky/dataset.json", "--judge", "cmd:{python} {judge}"],
    "experiment": ["samples/experiment/eval-samples.yaml", "--seed", "7", "--require", "progress"],
    "two-targets": ["{tmp}/eval-samples.yaml", "--target", "replay:{tmp}/x.jsonl", "--target", "replay:{tmp}/y.jsonl", "--judge", "cmd:{python} {judge}"],
}


def _run(name: str, args: list[str], tmp: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMK_")}
    env.update(NO_COLOR="1", COLUMNS="120")
    fill = {"python": "python3", "judge": str(tmp / "judge.py"), "tmp": str(tmp)}
    out = tmp / "runs" / name
    # not run_omk: this is a script run by hand to re-render the corpus, not a test
    cmd = [sys.executable, "-m", "omk", "eval", *(a.format(**fill) for a in args), "--out", str(out), "--no-cache"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{name}: {proc.stderr}")
    text = (out / "report.json").read_text(encoding="utf-8").replace(str(tmp), "/corpus")
    (CORPUS / name).mkdir(parents=True, exist_ok=True)
    (CORPUS / name / "report.json").write_text(text, encoding="utf-8")


def _built() -> None:
    """Reports built in the tests: the factory's (tool calls, mocks, XSS, an errored result), an
    experiment with the pairwise judge's votes and keys, one from before experiments, and an
    experiment whose treatment costs more than `max_cost_increase` allows (tokens, cost, latency),
    and a rerun with answers from the response cache."""
    sys.path.insert(0, str(ROOT / "tests"))
    from experiment_reports import synthetic_report
    from pairwise_reports import pair_block, with_pairwise
    from report_factory import make_report

    from omk.report.json_report import dumps_report

    old = make_report()
    block = pair_block()
    for v in block["verdicts"]:
        v.pop("orders"), v.pop("position")
    for key in ("control", "treatment", "position", "win_rate"):
        block.pop(key)
    block["verdicts"][0]["votes"] = [{"judge": "openai:gpt-4o", "preference": 1, "reason": "A is precise"}]
    old["pairwise"] = {**block, "judge": ["openai:gpt-4o"], "reports": [".", "target-2"]}
    from omk.stats import AnalysisSettings

    control = make_report()  # the control's run: the factory's results
    ids = [r["sample_id"] for r in control["results"]]
    scores = [r["scores"]["composite"] if r["status"] == "ok" else 2.0 for r in control["results"]]
    dear = synthetic_report(
        {"lean": scores, "thorough": [min(5.0, s + 0.4 + 0.1 * i) for i, s in enumerate(scores)]},
        spend={"lean": 1.0, "thorough": 1.4}, settings=AnalysisSettings(resamples=2000, max_cost_increase=25), ids=ids,
    )  # fmt: skip
    dear = {**control, "experiment": dear["experiment"]}
    cached = make_report()  # a rerun that took two answers from the response cache
    for r in cached["results"][:2]:
        r.update(cached=True, attempts=0)
    cached["summary"]["cached"] = 2
    built = (("factory", make_report()), ("cached", cached), ("pairwise-votes", with_pairwise(keys=("pairwise", "llm_comparison"), votes=True, pairs=2)), ("old-layout", old), ("experiment-cost", dear))
    for name, report in built:
        (CORPUS / name).mkdir(parents=True, exist_ok=True)
        (CORPUS / name / "report.json").write_text(dumps_report(report), encoding="utf-8")


def terminal_text(report: object, lang: str) -> str:
    """What `omk eval` prints after a run (on the commands' console: plain text, no highlighting),
    with its colours (as ANSI codes), 100 columns wide."""
    from omk.report.plain import PlainConsole
    from omk.report.terminal import print_summary

    console = PlainConsole(file=StringIO(), width=100, force_terminal=True, color_system="truecolor", record=True, legacy_windows=False)
    print_summary(report, console, lang, "report.json")  # type: ignore[arg-type]
    return console.export_text(styles=True)


def render(folder: Path) -> dict[str, str]:
    """Every format of `folder/report.json` in every language: file name -> text."""
    from omk.records.document import read_document
    from omk.report.html_report import render_html
    from omk.report.junit import render_junit
    from omk.report.markdown import render_markdown

    document = read_document(folder)
    out = {"junit.xml": render_junit(document)}
    for lang in LANGS:
        out[f"summary.{lang}.md"] = render_markdown(document, lang)
        out[f"report.{lang}.html"] = render_html(document, lang)
        out[f"terminal.{lang}.txt"] = terminal_text(document, lang)
    return out


def main() -> None:
    if "--runs" in sys.argv:
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            (tmp / "judge.py").write_text(JUDGE, encoding="utf-8")
            for file, text in TWO_TARGETS.items():
                (tmp / file).write_text(text, encoding="utf-8")
            for run, args in RUNS.items():
                shutil.rmtree(CORPUS / run, ignore_errors=True)
                _run(run, args, tmp)
        _built()
    for folder in sorted(p for p in CORPUS.iterdir() if (p / "report.json").is_file()):
        for file, text in render(folder).items():
            (folder / file).write_text(text, encoding="utf-8", newline="")
        print(folder.name)


if __name__ == "__main__":
    main()
