"""`omk eval SAMPLES --ablate SKILL_DIR`: SKILL.md cut into sections, the refusal next to other
variants, and the ablation of the bundled experiment end to end (the ranking and the part to cut)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.core.errors import ConfigError
from omk.engine.ablation import plan_ablation, split_skill
from omk.records.document import read_document
from omk.records.experiment_block import Ablation
from omk.records.fields import Fields

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "samples" / "experiment"
SKILL = EXPERIMENT / "skills" / "support-tone"
AGENT = "cmd:python ../agents/support_agent.py"  # samples/experiment/omk.yaml's target, given again on a resume

NESTED = """---
name: demo
description: "# not a heading: inside the front matter"
---
Lead text before any heading.

# Title
Intro.

## Rules
- one
### Detail
```sh
# a comment in a fence, not a heading
```
## Last
end
"""


def omk(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd)


def test_sections_run_to_the_next_heading_of_any_level_and_the_front_matter_stays():
    text = split_skill(NESTED)
    assert text.front.startswith("---\nname: demo")
    assert text.front.endswith("---\n")
    assert text.lead == "Lead text before any heading.\n\n"
    assert [(s.title, s.level) for s in text.sections] == [("Title", 1), ("Rules", 2), ("Detail", 3), ("Last", 2)]
    assert text.sections[1].text == "## Rules\n- one\n"  # stops at the nested heading
    assert "# a comment in a fence" in text.sections[2].text  # a fenced `#` line is not a heading
    assert text.front + text.lead + "".join(s.text for s in text.sections) == NESTED
    without_rules = text.without(1)
    assert without_rules.startswith(text.front + text.lead)
    assert "## Rules" not in without_rules
    assert "### Detail" in without_rules


def test_reference_files_are_parts_only_for_targets_that_receive_them(tmp_path):
    skill = tmp_path / "demo"
    (skill / "reference").mkdir(parents=True)
    (skill / "SKILL.md").write_text(NESTED, encoding="utf-8")
    (skill / "reference" / "forms.md").write_text("Form A, form B.\n", encoding="utf-8")
    cmd, _, _ = plan_ablation(skill, "cmd")
    claude, _, refs = plan_ablation(skill, "claude")
    assert [p.kind for p in cmd.parts] == ["section"] * 4
    assert [(p.kind, p.name) for p in claude.parts][-1] == ("reference", "reference/forms.md")
    assert len(refs) == 1
    assert [p.variant for p in claude.parts] == ["without-title", "without-rules", "without-detail", "without-last", "without-reference-forms.md"]
    assert all(p.tokens > 0 for p in claude.parts)
    (skill / "SKILL.md").write_text("---\nname: demo\n---\nno heading at all\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no Markdown heading"):
        plan_ablation(skill, "cmd")


def test_ablate_refuses_explicit_variants_in_one_line(tmp_path):
    proc = omk(
        "eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(SKILL),
        "--control", "baseline", "--treatment", str(SKILL), "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--ablate" in lines[0] and "--control/--treatment" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def ablated(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    work = tmp_path_factory.mktemp("ablate")
    proc = omk(
        "eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(SKILL),
        "--seed", "11", "--out", "run", "--no-cache", "--format", "md,html,junit", cwd=work,
    )  # fmt: skip
    return proc, work / "run"


def test_the_bundled_ablation_ranks_reply_rules_first_and_the_introduction_as_a_candidate_to_cut(ablated):
    proc, out = ablated
    block = read_document(out).experiment
    assert block is not None and block.ablation is not None, proc.stderr
    assert block.control == "whole-skill"
    assert [v.name for v in block.variants] == [
        "whole-skill", "without-acme-support-tone", "without-reply-rules",
    ]  # fmt: skip
    rules, intro = block.ablation.parts
    assert (rules.name, rules.kind) == ("Reply rules", "section")
    assert rules.contribution == pytest.approx(1.5)
    assert rules.ci_low is not None
    assert rules.ci_low > 0.1
    assert not rules.candidate
    assert rules.level == "REGRESS"
    assert rules.samples == 24
    assert intro.name == "Acme support tone"
    assert intro.contribution == 0
    assert intro.candidate
    assert rules.tokens > intro.tokens > 0
    # the typed record writes what it reads
    assert Ablation.from_json(Fields(block.ablation.to_json(), "ablation")) == block.ablation
    # each treatment's copy keeps the front matter and the skill's folder name, without its part
    run = block.runs["without-reply-rules"]
    assert run.report == "variants/without-reply-rules"
    (copies,) = (out.parent / ".omk" / "ablation").iterdir()  # one folder per skill content, beside the runs
    copy = (copies / "without-reply-rules" / "support-tone" / "SKILL.md").read_text(encoding="utf-8")
    assert copy.startswith("---\nname: support-tone")
    assert "## Reply rules" not in copy
    assert "# Acme support tone" in copy


def test_the_ablation_shows_in_the_terminal_markdown_and_html(ablated):
    proc, out = ablated
    assert "Ablation" in proc.stdout and "candidate to cut" in proc.stdout, proc.stdout
    rows = [line for line in proc.stdout.splitlines() if "Reply rules" in line or "Acme support tone" in line]
    assert len(rows) == 2
    assert "Reply rules" in rows[0]
    assert "+1.50" in rows[0]
    assert "candidate to cut" in rows[1]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "### Ablation" in summary
    assert "| Reply rules | section | +1.50 [+1.08, +1.83] | 59 | — | — | REGRESS |" in summary
    assert "| Acme support tone | section | +0.00 [+0.00, +0.00] | 35 | — | — | NOISE · candidate to cut |" in summary
    page = (out / "report.html").read_text(encoding="utf-8")
    table = page[page.index('<section id="ablation">') : page.index("</section>", page.index('<section id="ablation">'))]
    assert table.index("Reply rules") < table.index("Acme support tone")
    assert "<tr class=cut><td>Acme support tone</td>" in table
    assert table.count("class=cut") == 1


def test_junit_has_a_suite_of_the_parts_with_the_candidate_to_cut_named(ablated):
    from junit_shape import check_junit_shape

    proc, out = ablated
    root = check_junit_shape((out / "junit.xml").read_text(encoding="utf-8"))
    suites = root.findall("testsuite")
    assert [s.get("name", "").rsplit(" · ", 1)[-1] for s in suites] == ["whole-skill", "without-acme-support-tone", "without-reply-rules", "ablation"]
    suite = suites[-1]
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("ablation.support-tone.kept", "Reply rules"), ("ablation.support-tone.candidate-to-cut", "Acme support tone"),
    ]  # fmt: skip
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "0")  # a ranking is not a test failure: exit 0
    rules, intro = (c.findtext("system-out") or "" for c in cases)
    assert "composite lost +1.50 [+1.08, +1.83] over 24 paired samples" in rules
    assert "59 tokens" in rules
    assert "REGRESS" in rules
    assert "candidate to cut" not in rules
    assert "candidate to cut: its removal's whole interval lies within ±0.10" in intro
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["ablation:candidates_to_cut"] == "Acme support tone"
    assert props["ablation:skill"] == "support-tone"
    assert props["ablation:1:without-reply-rules"].startswith("Reply rules: section removed")
    assert int(root.get("tests", "0")) == 24 * 3 + 2  # every sample on every variant, and the parts
    again = omk("report", str(out), "--format", "junit", "--out", str(out.parent / "again"))
    assert again.returncode == 0
    assert (out.parent / "again" / "junit.xml").read_bytes() == (out / "junit.xml").read_bytes()


def _comparison(treatment: str, low: float, high: float) -> dict:
    composite = {"n": 20, "mean": (low + high) / 2, "ci": {"low": low, "high": high}}
    return {"control": "whole-skill", "treatment": treatment, "samples": 20, "composite": composite}


def test_only_an_interval_within_trivial_is_a_candidate_to_cut_and_the_trigger_change_is_kept():
    from omk.engine.ablation import AblationPlan, Part
    from omk.records.experiment_block import ExperimentBlock

    plan = AblationPlan("demo", "/skills/demo", (
        Part("without-tight", "section", "Tight", 10, 2),
        Part("without-wide", "section", "Wide", 20, 2),
        Part("without-when", "section", "When to use", 30, 2),
    ))  # fmt: skip
    pairs = [("without-tight", "NOISE"), ("without-wide", "UNDERPOWERED"), ("without-when", "REGRESS")]
    block = ExperimentBlock.read({
        "control": "whole-skill",
        "comparisons": [_comparison("without-tight", -0.05, 0.08), _comparison("without-wide", -0.4, 0.3), _comparison("without-when", -0.9, -0.5)],
        "verdict": {"level": "REGRESS", "pairs": [{"control": "whole-skill", "treatment": t, "level": lvl} for t, lvl in pairs]},
        "triggering": [
            {"treatment": "without-when", "skill": "other", "rate": "recall", "n": 10, "control_fired": 9, "treatment_fired": 9},
            {"treatment": "without-when", "skill": "demo", "rate": "recall", "n": 10, "control_fired": 9, "treatment_fired": 2},
            {"treatment": "without-when", "skill": "demo", "rate": "false_trigger_rate", "n": 10, "control_fired": 1, "treatment_fired": 4},
        ],
    })  # fmt: skip
    ranking = plan.ranking(block, trivial=0.1)
    assert [p.name for p in ranking.parts] == ["When to use", "Wide", "Tight"]  # largest contribution first: 0.7, 0.05, -0.015
    when, wide, tight = ranking.parts
    assert when.contribution == pytest.approx(0.7)
    assert (when.ci_low, when.ci_high) == (pytest.approx(0.5), pytest.approx(0.9))
    assert when.trigger_change == pytest.approx(-0.7)
    assert when.false_trigger_change == pytest.approx(0.3)
    assert not when.candidate
    assert wide.false_trigger_change is None
    assert tight.candidate
    assert tight.level == "NOISE"
    assert not wide.candidate
    assert wide.level == "UNDERPOWERED"  # too wide to say it does nothing
    from omk.report.ablation import rows

    assert [r[-1] for r in rows(ranking)] == ["REGRESS", "UNDERPOWERED · not shown to be without effect", "NOISE · candidate to cut"]
    assert rows(ranking)[0][4:6] == ("-70%", "+30%")
    assert rows(ranking)[1][4:6] == ("—", "—")


def test_shards_of_an_ablation_merge_into_one_ranking(tmp_path):
    common = ("--ablate", str(SKILL), "--seed", "7", "--quiet", "--no-cache")
    for i in (1, 2):  # each shard its own run folder; the copies of the skill are shared
        proc = omk("eval", str(EXPERIMENT / "eval-samples.yaml"), *common, "--shard", f"{i}/2", "--out", f"s{i}", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    proc = omk("merge", "s1", "s2", "--out", "merged", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    block = read_document(tmp_path / "merged").experiment
    assert block is not None
    assert block.ablation is not None
    assert [(p.name, p.candidate) for p in block.ablation.parts] == [("Reply rules", False), ("Acme support tone", True)]
    assert block.ablation.parts[0].samples == 24


def test_the_python_api_ablates_a_skill_and_returns_the_typed_ranking(tmp_path, monkeypatch):
    import tempfile

    import omk

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where a run kept in memory puts its copies
    outcome = omk.ablate(EXPERIMENT / "eval-samples.yaml", SKILL, seed=11, judge=False, cache=False, cwd=tmp_path)
    ranking = outcome.ablation
    assert isinstance(ranking, omk.Ablation)
    assert ranking == outcome.block.ablation
    assert all(isinstance(p, omk.AblationPart) for p in ranking.parts)
    assert [(p.name, p.candidate, p.level) for p in ranking.parts] == [("Reply rules", False, "REGRESS"), ("Acme support tone", True, "NOISE")]
    assert ranking.parts[0].contribution == pytest.approx(1.5)
    assert ranking.parts[0].samples == 24
    assert outcome.out_dir is None
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / ".omk").exists()  # nothing left behind
    written = omk.ablate(EXPERIMENT / "eval-samples.yaml", SKILL, seed=11, judge=False, cache=False, cwd=tmp_path, out="run", formats=["junit"])
    assert written.out_dir == tmp_path / "run"
    assert read_document(tmp_path / "run").experiment == written.block
    assert [p.name for p in written.ablation.parts] == ["Reply rules", "Acme support tone"] if written.ablation else False
    assert len(list((tmp_path / ".omk" / "ablation").iterdir())) == 1  # kept for a resume
    with pytest.raises(TypeError, match="spec string"):
        omk.ablate([{"sample_id": "a", "prompt": "p"}], SKILL, target=object())  # type: ignore[typeddict-item]


def test_copies_no_run_used_for_keep_days_are_pruned_and_nothing_else(tmp_path):
    import time

    from omk.engine.ablation import KEEP_DAYS, prune_copies

    folder = tmp_path / ".omk" / "ablation"
    old, recent, current = (folder / name for name in ("0123456789abcdef", "fedcba9876543210", "00000000000000aa"))
    other = folder / "notes"  # not a digest: not omk's
    for path in (old, recent, current, other):
        (path / "without-x" / "demo").mkdir(parents=True)
    (folder / "1111111111111111").symlink_to(old)  # never followed
    long_ago = time.time() - (KEEP_DAYS + 1) * 86400
    for path in (old, current, other):
        os.utime(path, (long_ago, long_ago))
    assert prune_copies(folder, keep=current) == [old]
    assert sorted(p.name for p in folder.iterdir()) == sorted(["fedcba9876543210", "00000000000000aa", "notes", "1111111111111111"])


def test_an_ablation_prunes_stale_copies_and_a_dry_run_leaves_none(tmp_path):
    import time

    stale = tmp_path / ".omk" / "ablation" / "0123456789abcdef"
    (stale / "without-x" / "demo").mkdir(parents=True)
    os.utime(stale, (time.time() - 30 * 86400,) * 2)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = ("eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(SKILL), "--quiet", "--no-cache")
    env_tmp = {**os.environ, "TMPDIR": str(scratch)}
    dry = run_omk(*args, "--dry-run", cwd=tmp_path, base=env_tmp, drop=(), columns=None, timeout=300)
    assert dry.returncode == 0, dry.stderr
    assert list(scratch.iterdir()) == []
    assert stale.exists()  # the dry run's copies are gone; it prunes nothing
    proc = omk(*args, "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (current,) = (tmp_path / ".omk" / "ablation").iterdir()
    assert current != stale
    assert time.time() - current.stat().st_mtime < 600


def _drop_last_result(run: Path, variant: str) -> None:
    results = run / "variants" / variant / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:-1]), encoding="utf-8")


def test_a_resume_writes_removed_copies_again_unless_the_skill_changed(tmp_path):
    import shutil

    skill = tmp_path / "skills" / "support-tone"
    shutil.copytree(SKILL, skill)
    proc = omk("eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(skill), "--seed", "3", "--quiet", "--no-cache", "--out", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = read_document(tmp_path / "run").experiment
    copies = tmp_path / ".omk" / "ablation"
    shutil.rmtree(copies)  # pruned, or `.omk` deleted by hand
    _drop_last_result(tmp_path / "run", "without-reply-rules")  # a run that still has a sample to do
    resumed = omk("eval", "--resume", "run", "--target", AGENT, "--quiet", "--no-cache", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    (root,) = copies.iterdir()
    assert "## Reply rules" not in (root / "without-reply-rules" / "support-tone" / "SKILL.md").read_text(encoding="utf-8")
    again = read_document(tmp_path / "run").experiment
    assert first is not None
    assert again is not None
    assert again.ablation == first.ablation
    shutil.rmtree(copies)
    _drop_last_result(tmp_path / "run", "without-reply-rules")
    with (skill / "SKILL.md").open("a", encoding="utf-8") as f:
        f.write("\n## New rules\nBe brief.\n")
    refused = omk("eval", "--resume", "run", "--target", AGENT, "--quiet", "--no-cache", cwd=tmp_path)
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "has changed since the run began" in lines[0], refused.stderr


TRIGGER_SKILL = """---
name: refunds
description: Handles refund requests.
---
# Refunds

Refunds are paid back to the card the order was paid with.

## When to use
Use for: refund, money

## When not to use
Not for: policy
"""

# A stand-in for a model deciding whether to use the skill from what its SKILL.md says: it fires
# (a `Skill` call) when the prompt has a word the "Use for" line names and none the "Not for" line
# names. Without "When to use" nothing fires; without "When not to use" the near misses fire.
TRIGGER_AGENT = """
import json, re, sys

request = json.loads(sys.stdin.readline())
system, prompt = request.get("system") or "", request["prompt"].lower()
def words(label):
    found = re.search(label + r":(.*)", system)
    return [w.strip() for w in found.group(1).split(",")] if found else []
if any(w in prompt for w in words("Use for")) and not any(w in prompt for w in words("Not for")):
    print(json.dumps({"type": "tool_call", "id": "s1", "tool": "Skill", "input": {"skill": "refunds"}}), flush=True)
    sys.stdin.readline()
print(json.dumps({"type": "response", "output": "Done."}), flush=True)
"""

PROBES = [("fire-1", "I want a refund for order A1", False), ("fire-2", "Can I get my money back?", False),
          ("miss-1", "What is your refund policy?", True), ("miss-2", "Do you take money orders?", True)]  # fmt: skip


@pytest.fixture(scope="module")
def triggered(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """An ablation of a skill whose "When to use" carries its recall and whose "When not to use"
    keeps a near miss from firing, from a folder whose omk.yaml declares other variants."""
    import yaml

    work = tmp_path_factory.mktemp("triggers")
    (work / "skills" / "refunds").mkdir(parents=True)
    (work / "skills" / "refunds" / "SKILL.md").write_text(TRIGGER_SKILL, encoding="utf-8")
    (work / "agent.py").write_text(TRIGGER_AGENT, encoding="utf-8")
    (work / "omk.yaml").write_text(
        f"target: cmd:{sys.executable} agent.py\nthreshold: 3.5\nvariants:\n"
        "  - { name: baseline, role: control, baseline: true }\n  - { name: old-arm, role: treatment, skill: skills/refunds }\n",
        encoding="utf-8",
    )
    samples = [
        {"sample_id": sid, "prompt": prompt, "mocks": [{"tool": "Skill", "return": "loaded"}],
         "assertions": [{"type": "skill_used", "value": "refunds", **({"not": True} if near_miss else {})}]}
        for sid, prompt, near_miss in PROBES
    ]  # fmt: skip
    (work / "probes.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    proc = omk("eval", "probes.yaml", "--ablate", "skills/refunds", "--seed", "3", "--no-cache", "--repeat", "3",
               "--out", "run", "--format", "md,html,junit", cwd=work)  # fmt: skip
    return proc, work / "run"


def test_ablate_replaces_the_variants_omk_yaml_declares(triggered):
    proc, out = triggered
    block = read_document(out).experiment
    assert block is not None and block.ablation is not None, proc.stdout + proc.stderr
    names = [v.name for v in block.variants]
    assert names[0] == "whole-skill"
    assert sorted(names[1:]) == ["without-refunds", "without-when-not-to-use", "without-when-to-use"]
    assert "baseline" not in proc.stdout
    assert "old-arm" not in proc.stdout
    assert not (out / "variants" / "old-arm").exists()


def test_removing_a_section_shows_its_recall_and_false_trigger_changes_in_every_format(triggered):
    proc, out = triggered
    block = read_document(out).experiment
    assert block is not None and block.ablation is not None, proc.stdout + proc.stderr
    parts = {p.name: p for p in block.ablation.parts}
    use, avoid, intro = parts["When to use"], parts["When not to use"], parts["Refunds"]
    assert (use.trigger_change, use.false_trigger_change) == (pytest.approx(-1.0), pytest.approx(-0.5))
    assert (avoid.trigger_change, avoid.false_trigger_change) == (pytest.approx(0.0), pytest.approx(0.5))
    assert (intro.trigger_change, intro.false_trigger_change) == (pytest.approx(0.0), pytest.approx(0.0))
    assert Ablation.from_json(Fields(block.ablation.to_json(), "ablation")) == block.ablation
    rows = {line.split()[0] + line.split()[1]: line for line in proc.stdout.splitlines() if line.startswith((" When", "When"))}
    assert "-100%" in rows["Whento"] and "-50%" in rows["Whento"] and "+50%" in rows["Whennot"], proc.stdout
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| recall change | false-trigger change |" in summary
    assert "| When to use | section |" in summary
    assert "| -100% | -50% |" in summary
    assert "| +0% | +50% |" in summary
    page = (out / "report.html").read_text(encoding="utf-8")
    table = page[page.index('<section id="ablation">') :]
    assert "<th class=num>false-trigger change</th>" in table
    assert "<td class=num>-50%</td>" in table
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert "recall change -100% · false-trigger change -50%" in junit
    assert "recall change +0% · false-trigger change +50%" in junit


def test_ablate_with_several_targets_is_refused_in_one_line(tmp_path):
    proc = omk(
        "eval", str(EXPERIMENT / "eval-samples.yaml"), "--ablate", str(SKILL),
        "--target", AGENT, "--target", "cmd:python other.py", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == ["--ablate makes its own variants (the whole skill, and the skill without each part): drop several --target"], proc.stderr
    assert not (tmp_path / "run").exists()
