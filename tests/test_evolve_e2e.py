"""`omk evolve` end to end, offline: the bundled demo (samples/evolve/) run as a user runs it, with
the scripted improver and the demo agent as real `cmd:` programs. The improver offers a change
with no effect, a change that overfits the train prompts and a real fix; the loop must keep the
fix alone, confirm it on the test split, never show the improver a held-out prompt, and run each
test prompt exactly twice."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

from omk.evolve.improver import MAX_FAILURES

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "samples" / "evolve"


def _omk(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, drop=(), columns=None, timeout=600)


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    work = tmp_path_factory.mktemp("evolve") / "demo"
    shutil.copytree(DEMO, work)
    done = _omk(
        work, "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py --record requests.jsonl",
        "--target", "cmd:python agent.py --record calls.jsonl", "--focus", "description", "--rounds", "3", "--candidates", "3",
        "--out", "out", "--write",
    )  # fmt: skip
    return work, done


def test_the_fix_is_kept_the_others_rejected_and_confirmed_on_test(evolved: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, done = evolved
    assert done.returncode == 0, done.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert [c["status"] for c in report["candidates"]] == ["rejected", "rejected", "accepted"]
    assert report["level"] == "PROGRESS"
    assert report["stop"] == "every train sample passes"
    assert report["candidates"][2]["decision"]["low"] > report["settings"]["trivial"]
    assert "+description: Drafts release notes for a software version, or a changelog summary." in report["diff"]
    assert "changelog summary" in (work / "skills" / "release-notes" / "SKILL.md").read_text()  # --write after PROGRESS
    assert "changelog summary" not in (DEMO / "skills" / "release-notes" / "SKILL.md").read_text()
    assert (work / "out" / "selected" / "release-notes" / "SKILL.md").read_text() == (work / "skills" / "release-notes" / "SKILL.md").read_text()
    assert "ACCEPTED" in done.stdout
    assert "PROGRESS" in done.stdout


def test_no_held_out_text_reaches_the_improver(evolved: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, _ = evolved
    report = json.loads((work / "out" / "report.json").read_text())
    prompts = {s["sample_id"]: s["prompt"] for s in yaml.safe_load((work / "eval-samples.yaml").read_text())["samples"]}
    requests = [json.loads(line)["request"] for line in (work / "requests.jsonl").read_text().splitlines()]
    assert requests
    held_out = [prompts[i] for i in report["split_ids"]["selection"] + report["split_ids"]["test"]]
    assert not [p for p in held_out if any(p in r for r in requests)]
    missed_train = [prompts[i] for i in report["split_ids"]["train"] if i.startswith("changelog-")]
    shown = sum(1 for p in missed_train if p in requests[0])  # what the improver learns from is there
    assert shown == min(len(missed_train), MAX_FAILURES)


def test_the_test_split_runs_exactly_twice(evolved: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, _ = evolved
    report = json.loads((work / "out" / "report.json").read_text())
    prompts = {s["sample_id"]: s["prompt"] for s in yaml.safe_load((work / "eval-samples.yaml").read_text())["samples"]}
    calls = [json.loads(line)["prompt"] for line in (work / "calls.jsonl").read_text().splitlines()]
    for sample_id in report["split_ids"]["test"]:
        assert calls.count(prompts[sample_id]) == 2, sample_id


def test_dry_run_calls_nothing(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    done = _omk(
        work, "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py --record requests.jsonl",
        "--target", "cmd:python agent.py --record calls.jsonl", "--focus", "description", "--rounds", "3", "--candidates", "3", "--dry-run",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "at most 440 sample run(s)" in done.stdout
    assert "improver" in done.stdout
    assert "$0.0000" not in done.stdout  # no call of the demo has a price: unknown, never "free"
    assert "estimated cost: unknown (no known price for cmd:python agent.py" in done.stdout
    assert not (work / "calls.jsonl").exists()
    assert not (work / "requests.jsonl").exists()


def test_too_few_samples_is_one_line_and_exit_2(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    done = _omk(work, "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py", "--split", "90/5/5")
    assert done.returncode == 2
    assert "too few samples for the split" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_evolve() -> None:
    done = _omk(ROOT, "--help")
    assert done.returncode == 0
    assert "evolve" in done.stdout


def _sh_blocks(text: str) -> list[str]:
    import re

    return [line.strip() for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S) for line in block.splitlines() if line.strip()]


def test_the_documented_command_prints_the_documented_lines(tmp_path: Path) -> None:
    docs = (ROOT / "docs" / "evolve.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command, dry_run = _sh_blocks(docs)
    assert command in _sh_blocks(readme)
    shutil.copytree(DEMO, tmp_path / "samples" / "evolve")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    planned = subprocess.run(["bash", "-c", dry_run], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert planned.returncode == 0 and not (tmp_path / ".omk").exists(), planned.stderr
    assert docs.split(dry_run, 1)[1].split("```")[2].strip("\n").splitlines() == planned.stdout.splitlines()
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    shown = docs.split(command, 1)[1].split("```")[2].strip("\n").splitlines()  # the block after the command's
    assert shown == done.stdout.splitlines()[: len(shown)]
    in_readme = readme.split(command, 1)[1].split("```")[2].strip("\n").splitlines()
    assert in_readme
    assert set(in_readme) <= set(done.stdout.splitlines())
    assert (tmp_path / ".omk" / "evolve" / "demo" / "report.json").is_file()


def test_html_page_draws_the_selection_score_per_round(evolved: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    from html.parser import HTMLParser

    work, _ = evolved
    report = json.loads((work / "out" / "report.json").read_text())
    assert [s["round"] for s in report["standings"]] == [0, 1]
    assert report["standings"][1]["mean"] > report["standings"][0]["high"]  # the fix lifts the score past the original's interval

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[str, dict[str, str | None]]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.seen.append((tag, dict(attrs)))

    tags = Tags()
    page = (work / "out" / "report.html").read_text()
    tags.feed(page)
    names = [t for t, _ in tags.seen]
    assert any(t == "svg" and a.get("id") == "selection-chart" for t, a in tags.seen)
    assert names.count("circle") == 2
    assert names.count("script") == 0
    assert sum(1 for t, a in tags.seen if t == "line" and a.get("class") == "interval") == 2
    assert sum(1 for t, a in tags.seen if t == "tr" and a.get("class") == "accepted") == 1
    assert "changelog summary" in page
    assert "PROGRESS" in page


def test_the_budget_stops_with_exit_3_and_the_same_command_resumes(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    command = [
        "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py --record requests.jsonl",
        "--focus", "description", "--rounds", "3", "--candidates", "3", "--out", "out",
    ]  # fmt: skip
    stopped = _omk(work, *command, "--budget-usd", "0.1")
    assert stopped.returncode == 3, stopped.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert report["level"] == "STOPPED"
    assert "run the same command again" in report["stop"]
    assert 0.1 <= report["cost_usd"] < 0.2
    assert (work / "out" / "state.json").is_file()
    resumed = _omk(work, *command, "--budget-usd", "5")
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads((work / "out" / "report.json").read_text())
    assert final["level"] == "PROGRESS"
    assert [c["status"] for c in final["candidates"]] == ["rejected", "rejected", "accepted"]
    assert len((work / "requests.jsonl").read_text().splitlines()) == 1  # round 1's answer was kept, not asked again
    other = _omk(work, *command[:-2], "--seed", "4", "--out", "out")
    assert other.returncode == 2
    assert "other settings" in other.stderr


def test_refused_candidates_cost_nothing_and_write_needs_progress(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    before = (work / "skills" / "release-notes" / "SKILL.md").read_text()
    done = _omk(
        work, "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py",
        "--target", "cmd:python agent.py --record calls.jsonl", "--focus", "body", "--rounds", "3", "--candidates", "3",
        "--out", "out", "--write",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert {c["status"] for c in report["candidates"]} == {"refused"}
    assert len(report["candidates"]) == 6
    reasons = [c["reason"] for c in report["candidates"]]
    assert all("--focus body changes only the body" in r for r in reasons[:3])
    assert all(r == "a duplicate of a candidate already tried" for r in reasons[3:])  # round 2 offers the same again
    assert report["level"] == "NO CHANGE"
    assert report["stop"] == "two rounds in a row with nothing accepted"
    assert (work / "skills" / "release-notes" / "SKILL.md").read_text() == before
    calls = (work / "calls.jsonl").read_text().splitlines()
    assert len(calls) == len(report["split_ids"]["train"]) + len(report["split_ids"]["selection"])  # the original only; no test run


def test_an_improver_that_fails_is_a_note_not_a_crash(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    (work / "broken.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    done = _omk(work, "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python broken.py", "--focus", "description", "--out", "out")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "note: round 1: the improver failed: command exited with code 3" in done.stdout
    assert json.loads((work / "out" / "report.json").read_text())["level"] == "NO CHANGE"


def test_a_refused_skill_folder_leaves_no_output_folder(tmp_path: Path) -> None:
    (tmp_path / "improver.py").write_text("", encoding="utf-8")
    done = _omk(tmp_path, "evolve", "nope", str(DEMO / "eval-samples.yaml"), "--improver", "cmd:python improver.py", "--out", "out")
    assert done.returncode == 2
    assert "not a skill folder" in done.stderr
    assert not (tmp_path / "out").exists()


def test_focus_description_needs_trigger_probes(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    items = [{"sample_id": f"task-{i}", "prompt": f"Write a haiku number {i}.", "assertions": [{"type": "contains", "value": "haiku"}]} for i in range(40)]
    (work / "tasks.yaml").write_text(yaml.safe_dump({"samples": items}), encoding="utf-8")
    done = _omk(work, "evolve", "skills/release-notes", "tasks.yaml", "--improver", "cmd:python improver.py", "--focus", "description", "--out", "out")
    assert done.returncode == 2
    assert "no trigger probe" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_html_page_draws_in_chromium_under_its_policy(evolved: tuple[Path, subprocess.CompletedProcess[str]], browser: object, tmp_path: Path) -> None:
    """The page as a browser draws it: one point per round, each inside its interval bar, the
    fix's point above the original's bar, and nothing the page's own no-script policy blocks."""
    from cdp_pipe import Page

    work, _ = evolved
    page = Page(browser)
    page.goto((work / "out" / "report.html").as_uri())
    assert page.js("document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content").startswith("default-src 'none'")
    points = page.js("[...document.querySelectorAll('#selection-chart circle.point')].map(c => c.getBoundingClientRect().y + c.getBoundingClientRect().height / 2)")
    bars = page.js("[...document.querySelectorAll('#selection-chart line.interval')].map(l => [l.getBoundingClientRect().top, l.getBoundingClientRect().bottom])")
    assert len(points) == len(bars) == 2
    for y, (top, bottom) in zip(points, bars, strict=True):
        assert top <= y <= bottom
    assert bars[0][1] - bars[0][0] > 10  # the original's interval has a spread (the fix passes everything: none)
    assert points[1] < bars[0][0]  # higher on screen: round 1's score is above the original's interval
    assert page.js("document.querySelector('#selection-chart').getBoundingClientRect().height") > 100
    assert page.js("getComputedStyle(document.querySelector('tr.accepted')).backgroundColor") != "rgba(0, 0, 0, 0)"  # the inline style applied
    assert page.errors() == []
    page.screenshot(tmp_path / "evolve.png")
    assert (tmp_path / "evolve.png").stat().st_size > 5000


def test_omk_view_lists_the_evolve_run_and_draws_its_page_itself(evolved: tuple[Path, subprocess.CompletedProcess[str]], browser: object, tmp_path: Path) -> None:
    from cdp_pipe import Page

    from omk.view.pages import link
    from omk.view.site import Site, serve

    work, _ = evolved
    root = tmp_path / "evolve"
    shutil.copytree(work / "out", root / "20260101-demo", ignore=shutil.ignore_patterns("candidates", "final"))
    (root / "20260101-demo" / "report.html").write_text("<p id='own'>own</p><script>window.__pwned = 1</script>", encoding="utf-8")
    bad = root / "20260102-bad"
    bad.mkdir()
    report = json.loads((work / "out" / "report.json").read_text())
    report["standings"][0]["mean"] = "<script>"
    (bad / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    site = Site([root])
    assert [e.key for e in site.evolve] == ["20260101-demo"]
    assert site.runs == []
    assert len(site.problems) == 1
    assert "standings[0].mean" in site.problems[0]
    assert "20260102-bad" in site.problems[0]
    index = site.page("/") or ""
    assert 'id="evolve"' in index
    assert "release-notes" in index
    assert "PROGRESS" in index
    urls: list[str] = []
    server = serve(site, 0, urls.append)
    page = Page(browser)
    try:
        page.goto(urls[0])
        assert page.js("document.querySelectorAll('#evolve tr').length") == 2
        page.goto(urls[0] + link("evolve", "20260101-demo"))
        assert page.js("document.getElementById('own') === null")
        assert page.js("window.__pwned === undefined")
        assert page.js("document.querySelectorAll('#selection-chart circle.point').length") == 2
        assert page.errors() == []
    finally:
        server.shutdown()
    out = tmp_path / "export"
    assert _omk(tmp_path, "view", str(root), "--export", str(out)).returncode == 0
    assert (out / "evolve-20260101-demo.html").is_file()
    assert "selection-chart" in (out / "evolve-20260101-demo.html").read_text()


def test_the_budget_stops_between_calls_and_the_resumed_loop_runs_only_what_is_left(tmp_path: Path) -> None:
    """A budget that runs out inside a split: the samples that ran are kept (state.json), what they
    cost is counted, the loop exits 3, and the same command runs only the samples left: each
    prompt runs once with the original skill over both invocations."""
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    command = [
        "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py",
        "--target", "cmd:python agent.py --record calls.jsonl", "--focus", "description", "--rounds", "3", "--candidates", "3", "--out", "out",
    ]  # fmt: skip
    stopped = _omk(work, *command, "--budget-usd", "0.05")  # train (44 calls at $0.001) fits, selection (22) does not
    assert stopped.returncode == 3, stopped.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert report["level"] == "STOPPED"
    assert report["candidates"] == []
    first = [json.loads(line) for line in (work / "calls.jsonl").read_text().splitlines()]
    assert 50 <= len(first) < 66  # some of the selection split ran, not all of it
    assert 0.05 <= report["cost_usd"] <= 0.001 * len(first) + 1e-9
    state = json.loads((work / "out" / "state.json").read_text())
    kept = {k.rsplit(":", 1)[1]: len(v) for k, v in state["outcomes"].items()}
    assert kept["train"] == 44
    assert 0 < kept["selection"] < 22
    assert state["answers"] == {}
    resumed = _omk(work, *command, "--budget-usd", "5")
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads((work / "out" / "report.json").read_text())
    assert final["level"] == "PROGRESS"
    calls = [json.loads(line) for line in (work / "calls.jsonl").read_text().splitlines()]
    original = calls[0]["description"]
    ran = [c["prompt"] for c in calls if c["description"] == original]
    prompts = {s["sample_id"]: s["prompt"] for s in yaml.safe_load((work / "eval-samples.yaml").read_text())["samples"]}
    for sample_id in final["split_ids"]["train"] + final["split_ids"]["selection"]:
        assert ran.count(prompts[sample_id]) == 1, sample_id


def test_a_loop_answered_from_the_cache_costs_nothing_and_its_budget_is_not_spent(tmp_path: Path) -> None:
    """The same loop run again into another folder: every answer comes from omk's response cache,
    so nothing is spent, by the one rule the engine's budget and the loop's ledger share; a budget
    smaller than the first run's cost does not stop it."""
    work = tmp_path / "demo"
    shutil.copytree(DEMO, work)
    samples = yaml.safe_load((DEMO / "eval-samples.yaml").read_text(encoding="utf-8"))["samples"]
    probes = [s for s in samples if s["sample_id"].startswith("changelog-")][:14]
    (work / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": probes}), encoding="utf-8")
    command = [
        "evolve", "skills/release-notes", "eval-samples.yaml", "--improver", "cmd:python improver.py --offer fix",
        "--target", "cmd:python agent.py --record calls.jsonl", "--focus", "description", "--rounds", "1", "--candidates", "1", "--split", "1/7/6",
    ]  # fmt: skip
    first = _omk(work, *command, "--out", "first")
    assert first.returncode == 0, first.stderr
    calls = (work / "calls.jsonl").read_text().splitlines()
    paid = json.loads((work / "first" / "report.json").read_text())
    assert paid["level"] == "PROGRESS"
    assert paid["cost_usd"] == pytest.approx(0.001 * len(calls))  # each answer of the demo agent costs $0.001
    again = _omk(work, *command, "--out", "again", "--budget-usd", "0.01")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work / "calls.jsonl").read_text().splitlines() == calls  # no call made
    free = json.loads((work / "again" / "report.json").read_text())
    assert (free["level"], free["cost_usd"], free["cost_per_round"]) == ("PROGRESS", 0.0, {"1": 0.0})
    assert json.loads((work / "again" / "state.json").read_text())["spent_usd"] == 0.0
