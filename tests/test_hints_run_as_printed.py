"""Every command omk prints as advice runs as printed: each hint is taken from the CLI's own
output in the situation that produces it (a budget stop, a resume refused because a command
target and a custom hook must be given again) and run for real, split as a shell would."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from budget_support import omk as budget_omk
from budget_support import write_samples
from run_folder_support import AGENT, HOOK, HOOKED_SAMPLES, TARGET
from run_folder_support import omk as trust_omk

from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply


def hint(text: str, lead: str) -> list[str]:
    """The command after `lead` in `text`, split as the shell splits it, `omk` run as this
    Python's `-m omk`."""
    found = re.search(re.escape(lead) + r"\s*(omk .+)$", text, re.MULTILINE)
    assert found is not None, text
    words = shlex.split(found.group(1))
    assert words[0] == "omk"
    return words[1:]


def test_the_budget_stop_hint_runs_as_printed(tmp_path: Path) -> None:
    path = write_samples(tmp_path, 10)
    run = tmp_path / "run dir"  # a space: the hint must quote it
    reply = text_reply("ok", prompt_tokens=100_000, completion_tokens=0)  # gpt-4o: $0.25 a call
    with ModelServer.for_openai(lambda request: reply) as fake:
        proc = budget_omk("eval", str(path), "--target", "openai:gpt-4o", "--out", str(run), "--concurrency", "1", "--budget-usd", "1",
                          cwd=tmp_path, url=fake.url)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        again = budget_omk(*hint(proc.stderr, "continue it with:"), cwd=tmp_path, url=fake.url)
        assert again.returncode in (0, 3), again.stdout + again.stderr  # accepted: it ran on, within the new limit
        assert len(fake.requests) > 4


def test_a_refused_resume_names_everything_to_give_again_and_runs_as_printed(tmp_path: Path) -> None:
    """A command target and a custom hook both need confirming: the refusal's command gives both,
    so running it is accepted (on today's main it named only the target and was refused again)."""
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(HOOKED_SAMPLES, encoding="utf-8")
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    first = trust_omk("eval", "s.yaml", "--target", TARGET, "--out", "run", "--no-cache", "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "hook-ran").unlink()
    (tmp_path / "run" / "results.jsonl").write_text("", encoding="utf-8")
    refused = trust_omk("eval", "--resume", "run", "--no-cache", "--quiet", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    words = hint(refused.stderr, "again:")
    again = trust_omk(*words, "--no-cache", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "hook-ran").exists()


def test_the_interrupt_hint_is_one_complete_command() -> None:
    """The interrupted run's hint and the budget stop's are made by one function: the same
    complete command, quoted (omk/runner/resume.py resume_command)."""
    from omk.runner.resume import resume_command

    command = resume_command("/tmp/a run", ["cmd:python3 agent.py", "openai:gpt-4o"], ["claude:sonnet"], [])
    assert shlex.split(command) == ["omk", "eval", "--resume", "/tmp/a run", "--target", "cmd:python3 agent.py", "--judge", "claude:sonnet"]
    assert subprocess.run([sys.executable, "-c", "import shlex,sys; shlex.split(sys.argv[1])", command]).returncode == 0


def test_the_init_hint_runs_as_printed(tmp_path: Path) -> None:
    """`omk init` into a folder whose name has a space: its `run:` command is quoted and runs."""
    made = budget_omk("init", "my evals", cwd=tmp_path, url="http://127.0.0.1:9")
    assert made.returncode == 0, made.stderr
    ran = budget_omk(*hint(made.stdout, "run:"), cwd=tmp_path, url="http://127.0.0.1:9")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def quoted_commands(text: str) -> list[list[str]]:
    """Every `omk …` command the output quotes in backticks, split as the shell splits it."""
    found = [shlex.split(c) for c in re.findall(r"`(omk [^`]+)`", text)]
    assert all(words[0] == "omk" for words in found)
    return [words[1:] for words in found]


def test_the_doctors_hint_runs_as_printed(tmp_path: Path) -> None:
    """The doctor says `omk eval FILE --strict` refuses a misspelt field: run as printed (from a
    folder whose name has a space), it does, naming the field (on today's main the hint was
    `omk eval --strict`, which ran the default samples instead of this file)."""
    folder = tmp_path / "my evals"
    folder.mkdir()
    (folder / "s.yaml").write_text("- sample_id: a\n  prompt: hi\n  colour: x\n  assertions: [{type: contains, value: hi}]\n", encoding="utf-8")
    doctor = budget_omk("doctor", "my evals/s.yaml", cwd=tmp_path, url="http://127.0.0.1:9")
    commands = quoted_commands(doctor.stdout)
    assert commands, doctor.stdout
    for words in commands:
        ran = budget_omk(*words, cwd=tmp_path, url="http://127.0.0.1:9")
        assert ran.returncode == 2 and "colour" in ran.stderr and "s.yaml:3" in ran.stderr, ran.stdout + ran.stderr


def _priced(out: str) -> bool:
    return "not counted" not in out and re.search(r"estimated cost: \$0\.0*[1-9]", out) is not None


def test_the_dry_runs_price_hint_does_what_it_says(tmp_path: Path) -> None:
    """`--dry-run` names the omk.yaml setting that prices an unknown model, with an example: the
    example written into omk.yaml as printed prices the run. A `cmd:` target has no such setting,
    and the dry run names none (on today's main it said `openai.price / anthropic.price`, which
    priced nothing)."""
    path = write_samples(tmp_path, 3)
    args = ("eval", str(path), "--target", "openai:my-own-model", "--dry-run")
    before = budget_omk(*args, cwd=tmp_path, url="http://127.0.0.1:9")
    assert before.returncode == 0 and not _priced(before.stdout), before.stdout + before.stderr
    example = re.search(r"e\.g\. `([^`]+)`", before.stdout)
    assert example is not None, before.stdout
    (tmp_path / "omk.yaml").write_text(example.group(1) + "\n", encoding="utf-8")
    after = budget_omk(*args, cwd=tmp_path, url="http://127.0.0.1:9")
    assert after.returncode == 0 and _priced(after.stdout), after.stdout + after.stderr

    (tmp_path / "omk.yaml").unlink()
    agent = budget_omk("eval", str(path), "--target", f"cmd:{sys.executable} -c pass", "--dry-run", cwd=tmp_path, url="http://127.0.0.1:9")
    assert agent.returncode == 0, agent.stderr
    assert ".price" not in agent.stdout and "the cost_usd the target reports" in agent.stdout, agent.stdout
