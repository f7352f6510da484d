"""Under `--lang zh` no English line is left in any command's output over the bundled samples:
`omk eval` (a passing run, a replay with failed checks, an experiment), `omk doctor` (of the set
and of a run), `omk verdict`, `omk diff`, `omk power` (of an experiment and of a run), and the Markdown and HTML reports `omk report` writes (the HTML above its per-result panels).
An English line is one with two or more English words of prose once the sample's own words are
taken out (tests/english_lines.py says exactly what is not prose)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_support import run_omk
from english_lines import english_lines

ROOT = Path(__file__).resolve().parent.parent


def omk(*args: str, cwd: Path) -> str:
    proc = run_omk(*args, cwd=cwd, drop=(), columns=100, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def page_text(path: Path) -> str:
    """What report.html shows as text above its per-result panels (the page's header, summary,
    experiment, tables and charts): tags, scripts, styles and embedded data taken out. The panels
    show every check's own message, which is not translated yet."""
    page = path.read_text(encoding="utf-8").split('<div id="details">')[0]
    page = re.sub(r"<(script|style|template)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"<br\s*/?>|</(p|li|tr|h\d|div|section|table|caption|summary|th|td|pre)>", "\n", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def sample_words(*runs: Path) -> tuple[set[str], list[str]]:
    """The names (ids, capabilities, difficulties, assertion types, variants) and the texts
    (prompts, outputs, assertion values) of the samples behind `runs`."""
    names: set[str] = set()
    content: list[str] = []
    for run in runs:
        for report in run.rglob("report.json"):
            data = json.loads(report.read_text(encoding="utf-8"))
            for r in data["results"]:
                names.update([r["sample_id"], *(r.get("capability") or []), str(r.get("difficulty"))])
                content += [r.get("prompt") or "", r.get("output") or ""]
                for turn in r.get("turns") or []:
                    content += [turn.get("prompt") or "", turn.get("output") or ""]
                names.update(a["type"] for a in r.get("assertions") or [])
            for v in (data.get("experiment") or {}).get("variants") or []:
                names.add(v["name"])
    return names, content


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    here = tmp_path_factory.mktemp("zh")
    shutil.copytree(ROOT / "samples", here / "samples")
    said = {
        "eval": omk("eval", "samples/eval-samples.yaml", "--lang", "zh", "--out", "r1", "--no-judge", cwd=here),
        "eval replay": omk("eval", "samples/eval-samples.yaml", "--lang", "zh", "--out", "r2", "--no-judge", "--target", "replay:samples/responses.jsonl", cwd=here),
        "doctor": omk("doctor", "samples/eval-samples.yaml", "--lang", "zh", cwd=here),
        "doctor of a run": omk("doctor", "samples/eval-samples.yaml", "--lang", "zh", "--report", "r2", cwd=here),
        "experiment": omk("eval", "samples/experiment/eval-samples.yaml", "--lang", "zh", "--out", "x1", "--seed", "7", "--no-judge", cwd=here),
        "skills doctor": omk("doctor", "samples/skills/eval-samples.yaml", "--lang", "zh", cwd=here),
        "verdict": omk("verdict", "x1", "--lang", "zh", cwd=here),
        "diff": omk("diff", "r1", "r2", "--lang", "zh", cwd=here),
        "power": omk("power", "x1", "--lang", "zh", cwd=here),
        "power of a run": omk("power", "r1", "--lang", "zh", cwd=here),
    }  # fmt: skip
    for run in ("r1", "r2", "x1"):
        omk("report", run, "--format", "md,html", "--lang", "zh", "--out", f"{run}-zh", cwd=here)
        said[f"{run} summary.md"] = (here / f"{run}-zh" / "summary.md").read_text(encoding="utf-8")
        said[f"{run} report.html"] = page_text(here / f"{run}-zh" / "report.html")
    names, content = sample_words(here / "r1", here / "r2", here / "x1")
    return {name: "\n".join(english_lines(text, names, content)) for name, text in said.items()}


@pytest.mark.parametrize(
    "command",
    ["eval", "eval replay", "doctor", "doctor of a run", "experiment", "skills doctor", "verdict", "diff", "power", "power of a run",
     "r1 summary.md", "r2 summary.md", "x1 summary.md", "r1 report.html", "r2 report.html", "x1 report.html"],
)  # fmt: skip
def test_no_english_line_under_lang_zh(outputs: dict[str, str], command: str) -> None:
    assert outputs[command] == "", outputs[command]


def test_the_checker_tells_english_from_names_paths_and_content() -> None:
    assert english_lines("  PROGRESS · support-tone vs baseline: Δ=+1.50 · recovers from broken control", ["support-tone", "baseline"]) != []
    assert english_lines("  可以发布 — support-tone 的综合分比 baseline 高 +1.50", ["support-tone", "baseline"]) == []
    assert english_lines("报告: /tmp/a run/report.json · `omk eval s.yaml --strict` · --repeat 2") == []
    assert english_lines("│   ↳ 第 1 轮: Hi, my order A1001 still hasn't ar… │ ok │", content=["Hi, my order A1001 still hasn't arrived."]) == []
    assert english_lines("    - 低于阈值 3.5：behavior 1.00; contains 'teammate'：输出不包含 \"teammate\"") == []
    assert english_lines("    - below threshold 3.5: behavior 1.00") != []
