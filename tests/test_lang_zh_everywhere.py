"""Under `--lang zh` no English line is left in any command's output over the bundled samples:
`omk eval` (a passing run, a replay with failed checks, an experiment), `omk doctor` (of the set
and of a run), `omk verdict`, `omk diff`, `omk power` (of an experiment and of a run), the `--require` line, and the Markdown and HTML reports `omk report`
writes (the HTML's whole visible text, its per-result panels with their labels, checks and trace
tables included); `omk evolve` over its offline demo (samples/evolve: the demo agent and the
scripted improver), its dry run, and the report.md and report.html it writes; `omk view --export`
(what it prints and every page it writes: the list of runs with its trend chart, a comparison, a
sample's history, a run's and an evolve run's page).
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
    """What report.html shows as text (the page's header, summary, experiment, tables, charts and
    every result's panel): tags, scripts, styles and embedded data taken out, and the quoted
    content a panel shows as it was (a prompt, an output, a tool call's input and output, each in a
    `<pre>` of its own; a check's second lines, omk's own words, stay)."""
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<(script|style|template)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"<pre>.*?</pre>", " ", page, flags=re.S)  # quoted content; <pre class="assert-detail"> stays
    page = re.sub(r"<br\s*/?>|</(p|li|tr|h\d|div|section|table|caption|summary|th|td|pre)>", "\n", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _assertions(assertions: list[dict]) -> list[dict]:
    """Every check, the ones inside an assert-set included."""
    return [x for a in assertions for x in (a, *_assertions(a.get("children") or []))]


def _values(value: object) -> list[str]:
    """An assertion's values as the sample wrote them, and the needle of a `Tool:needle`."""
    texts = [str(v) for v in (value if isinstance(value, list) else [value]) if v is not None]
    return texts + [text.split(":", 1)[1] for text in texts if ":" in text]


def sample_words(*runs: Path) -> tuple[set[str], list[str]]:
    """The names (ids, capabilities, difficulties, assertion types, variants) and the texts
    (prompts, outputs, assertion values, the messages of the samples' own check scripts) of the
    samples behind `runs`."""
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
                for a in _assertions(r.get("assertions") or []):
                    names.add(a["type"])
                    content += _values(a.get("value"))
                    if a["type"] == "custom":  # the sample's own check script words its message
                        content.append(a.get("message") or "")
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
        "experiment": omk("eval", "samples/experiment/eval-samples.yaml", "--lang", "zh", "--out", "x1", "--seed", "7", "--no-judge", "--require", "no-regress", cwd=here),
        "skills doctor": omk("doctor", "samples/skills/eval-samples.yaml", "--lang", "zh", cwd=here),
        "verdict": omk("verdict", "x1", "--lang", "zh", cwd=here),
        "verdict --require progress": omk("verdict", "x1", "--lang", "zh", "--require", "progress", cwd=here),
        "diff": omk("diff", "r1", "r2", "--lang", "zh", cwd=here),
        "power": omk("power", "x1", "--lang", "zh", cwd=here),
        "power of a run": omk("power", "r1", "--lang", "zh", cwd=here),
        "eval --dry-run": omk("eval", "samples/eval-samples.yaml", "--lang", "zh", "--dry-run", cwd=here),
        "experiment --dry-run": omk("eval", "samples/experiment/eval-samples.yaml", "--lang", "zh", "--dry-run", cwd=here),
        "init": omk("init", "starter", "--lang", "zh", cwd=here),
    }  # fmt: skip
    said["gold init"] = omk("gold", "init", "r1", "--out", "labels.jsonl", "--lang", "zh", cwd=here)
    said.update(evolve_and_view(here))
    for run in ("r1", "r2", "x1"):
        omk("report", run, "--format", "md,html", "--lang", "zh", "--out", f"{run}-zh", cwd=here)
        said[f"{run} summary.md"] = (here / f"{run}-zh" / "summary.md").read_text(encoding="utf-8")
        said[f"{run} report.html"] = page_text(here / f"{run}-zh" / "report.html")
    names, content = sample_words(here / "r1", here / "r2", here / "x1", here / "r3", here / "ev" / "final")
    names.update(["release-notes", "selected", "original"])  # the evolve demo's skill and its final check's two arms
    return {name: "\n".join(english_lines(text, names, content)) for name, text in said.items()}


EVOLVE = ("samples/evolve/skills/release-notes", "samples/evolve/eval-samples.yaml", "--improver", "cmd:python samples/evolve/improver.py",
          "--focus", "description", "--rounds", "3", "--candidates", "3", "--lang", "zh")  # fmt: skip


def evolve_and_view(here: Path) -> dict[str, str]:
    """`omk evolve` over the offline demo (its terminal lines, report.md, report.html, its dry
    run), then `omk view --export` over two replays of one target that differ in one answer (so
    the export has a trend, a comparison and a sample's page) and the evolve run."""
    said = {"evolve": omk("evolve", *EVOLVE, "--out", "ev", cwd=here), "evolve --dry-run": omk("evolve", *EVOLVE, "--dry-run", cwd=here)}
    diff = re.compile(r"```diff\n.*?```", re.S)  # the skill's own text, quoted as the page quotes it in a <pre>
    said["evolve report.md"] = diff.sub(" ", (here / "ev" / "report.md").read_text(encoding="utf-8"))
    said["evolve report.html"] = page_text(here / "ev" / "report.html")
    other = here / "other"
    shutil.copytree(here / "samples", other / "samples")
    answers = (other / "samples" / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(answers[0])
    answers[0] = json.dumps({**first, "output": "?"}, ensure_ascii=False)
    (other / "samples" / "responses.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")
    omk("eval", "samples/eval-samples.yaml", "--out", "../r3", "--no-judge", "--target", "replay:samples/responses.jsonl", cwd=other)
    said["view --export"] = omk("view", "r2", "r3", "ev", "--export", "pages", "--lang", "zh", cwd=here)
    written = sorted((here / "pages").glob("*.html"))
    kinds = {path.name.split("-", 1)[0].removesuffix(".html") for path in written}
    assert kinds == {"index", "run", "compare", "sample", "evolve"}, written  # every kind of page the view has
    said["view pages"] = "\n".join(page_text(path) for path in written)
    return said


@pytest.mark.parametrize(
    "command",
    ["eval", "eval replay", "doctor", "doctor of a run", "experiment", "skills doctor", "verdict", "verdict --require progress", "diff", "power", "power of a run",
     "eval --dry-run", "experiment --dry-run", "init", "gold init",
     "evolve", "evolve --dry-run", "evolve report.md", "evolve report.html", "view --export", "view pages",
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


CHECK_MESSAGES = [  # one message of each kind the checks write (omk/assertions, omk/judge); quoted parts are the sample's
    'output contains all 3 values', 'output contains none of 2 values', 'output contains "a", "b"', 'output does not contain "x"',
    'output equals "hi"', 'output "yo" does not equal "hi"', 'output does not equal "hi"', 'output starts with "I am", not "Hi"',
    'output ends with "bye", not "today?"', 'output matches "a.c" at "abc"', 'output does not match "a.c"',
    'regex "(a+)+$" ran out of time (1s); the pattern probably backtracks catastrophically', 'output is valid JSON',
    'output is not valid JSON: JSONDecodeError', 'output matches the schema', "schema violation at $.a: 'x'",
    'length 61 >= min 20', 'word count 46 <= max 80', 'turns 1 < min 2', 'tool calls 4 > max 3', 'cost 0.2 > max 0.1', 'latency 900ms <= max 1000ms',
    'ROUGE-1 recall 0.93 >= 0.6', 'BLEU-4 (smoothed) 0.65 >= 0.3', 'edit distance 24 <= max 40', 'trace has no cost',
    'not called: Bash', 'called: Read', 'called outside the allowed tools (Read, Grep): Bash', 'only allowed tools called (Read, Grep)',
    'Bash was not called', 'input of Read (2 calls) does not contain "a.py"', 'output of a Read call contains "md5"',
    'mock Read:1 hit 0 time(s) < 1', '2 tool call(s) follow the 2 step(s) (in_order)\n   expected  actual\n   Read      Read',
    'tool calls differ from the steps (exact) at step 2', 'skill pdf is not installed in this run (installed: docx)',
    'skill pdf invoked 0 time(s) < 1; fired instead: docx', 'skill pdf invoked 2 time(s) within 1..3',
    'notes.md exists (12 bytes)', 'notes.md contains "x"', 'notes.md does not match /a+/', 'notes.md matches the schema',
    '2 file(s) changed, all as allowed', 'the pattern ran out of time (1s) on notes.md', 'cannot start pytest: ENOENT',
    '`pytest -q` timed out after 30s and was killed', '`make` printed more than 1000 bytes; raise max_output_bytes in omk.yaml if that is expected',
    'no workspace: the target worked in no folder of its own (claude:, or cmd: with `workspace:`), or the result came from the cache',
    'custom assertion timed out (5s)', 'custom assertion error: boom', 'polite_zh raised ValueError: 42', 'unsupported assertion type: \'nope\'',
    'skipped: no judge configured', 'skipped: judge turned off (--no-judge)', '1/3 children passed (mode any)',
    'polite_zh returned int; expected a bool, (bool, message), a mapping with pass, or an Outcome',
    'output contains the expected text (ignoring case)', 'token F1 0.71 (precision 0.55, recall 1.00) >= threshold 0.5',
    '3 distinct citation(s) >= 1 (format mixed)', 'first call is Read, expected Bash', 'expected a call of Read({}), got no tool call',
    '1 of 2 call(s) match Read({}): not >= 2', 'context user.name is missing or empty', '4/5 (threshold 3)',
    'faithfulness: needs sample.context or the assertion\'s `reference` (no judge call made)',
]  # fmt: skip


@pytest.mark.parametrize("message", CHECK_MESSAGES)
def test_every_kind_of_check_message_is_said_in_chinese(message: str) -> None:
    from omk.report.i18n import check_text, reason_text

    tools = ("Read", "Bash", "Grep")  # names the sample gives
    assert english_lines(check_text(message, "zh"), tools) == [], check_text(message, "zh")
    assert english_lines(reason_text(f"json_schema: {message}", "zh"), tools) == [], reason_text(f"json_schema: {message}", "zh")
    assert check_text(message, "en") == message


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("turn 2: regex \"a\": no match", "第 2 轮："),
        ("turn 1: error: the CLI exited 1", "第 1 轮：错误："),
        ("  similar: metric 0.4", "  similar：指标 0.4"),
        ("regex \"a\": no match [metric 0.3]", "［指标 0.3］"),
        ("turn 3: judge overall 2/5: too short", "第 3 轮：评委 overall 2/5："),
    ],
)
def test_a_conversation_s_and_a_metric_s_frame_is_said_in_chinese(line: str, said: str) -> None:
    """The frames omk/report/reasons.py puts around a check's message (a turn's number, a metric,
    a judge's score) are said in Chinese too; the dimension's name and the judge's words stay."""
    from omk.report.i18n import reason_text

    shown = reason_text(line, "zh")
    assert said in shown
    assert not re.search(r"\b(turn|metric|judge|error)\b", shown), shown
