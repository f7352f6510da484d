"""`omk observe` on sessions the real CLIs write: Claude Code and Codex run against the scripted
loopback model with their own HOME in the test folder, on four requests: one that fires the skill,
one close to it that does not (a planted missed trigger), one far from it that fires it anyway (a
planted false trigger) and an unrelated one. `omk observe` finds both planted candidates and
writes probes `omk doctor` accepts. Recorded fresh on every run, so a field the CLIs rename is
caught here."""

from __future__ import annotations

from pathlib import Path

from claude_support import require_claude, write_skill
from codex_support import require_codex
from session_support import omk, record_claude, record_codex, script

from omk.records.observe import Observation

PROMPTS = ["please greet my friend Ann", "+greet the new team member warmly", "+what is the capital city of France today", "+list the files"]

CLAUDE_SCRIPT = """
rules:
  - when: "Ann"
    tools:
      - Skill: {skill: greeter}
    answer: "HELLO-FROM-SKILL, Ann."
  - when: "capital"
    tools:
      - Skill: {skill: greeter}
    answer: "Paris."
  - when: "list"
    tools:
      - Bash: {command: "echo one two", description: "list"}
    answer: "one and two"
  - answer: "Welcome aboard!"
"""

CODEX_SCRIPT = r"""
rules:
  - when: "Ann"
    tools:
      - exec_command: {cmd: 'cat "$CODEX_HOME/skills/greeter/SKILL.md"'}
    answer: "HELLO-FROM-SKILL, Ann."
  - when: "capital"
    tools:
      - exec_command: {cmd: 'cat "$CODEX_HOME/skills/greeter/SKILL.md"'}
    answer: "Paris."
  - when: "list"
    tools:
      - exec_command: {cmd: "echo one two"}
    answer: "one and two"
  - answer: "Welcome aboard!"
"""


def _skills(folder: Path) -> None:
    write_skill(folder, "greeter", "Greets people. Use when asked to greet someone.", "Say HELLO-FROM-SKILL first.")
    write_skill(folder, "unused", "Files tax returns. Use for taxes.", "Never used here.")


def _observed(tmp_path: Path, work: Path, env: dict[str, str]) -> Observation:
    done = omk(["observe", "--json", "--write-probes", str(tmp_path / "probes.yaml")], work, env)
    assert done.returncode == 0, done.stdout + done.stderr
    doctor = omk(["doctor", str(tmp_path / "probes.yaml")], tmp_path, env)
    assert " 0 errors" in doctor.stdout, doctor.stdout + doctor.stderr
    return Observation.loads(done.stdout)


def _check(o: Observation) -> None:
    greeter = next(s for s in o.skills if s.skill == "greeter")
    assert (greeter.firing.k, greeter.firing.n) == (2, 4)
    assert [c.prompt for c in greeter.missed] == ["greet the new team member warmly"]
    assert [c.prompt for c in greeter.false_triggers] == ["what is the capital city of France today"]
    unused = next(s for s in o.skills if s.skill == "unused")
    assert unused.firing.k == 0
    assert unused.missed == ()
    assert unused.description == "Files tax returns. Use for taxes."


def test_observe_on_claude_code_sessions(tmp_path):
    claude = require_claude()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    _skills(work / ".claude" / "skills")
    record_claude(claude, script(CLAUDE_SCRIPT), home, work, PROMPTS)
    o = _observed(tmp_path, work, {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")})
    _check(o)
    assert dict(next(s for s in o.skills if s.skill == "greeter").how) == {"skill_call": 2}
    assert {s.skill for s in o.skills} == {"greeter", "unused"}
    assert o.not_found  # Claude Code's own skills, named once


def test_observe_on_codex_sessions(tmp_path):
    codex = require_codex()
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".codex").mkdir(parents=True)
    work.mkdir()
    _skills(home / ".codex" / "skills")
    record_codex(codex, script(CODEX_SCRIPT), home, work, PROMPTS)
    o = _observed(tmp_path, work, {"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
    _check(o)
    assert dict(next(s for s in o.skills if s.skill == "greeter").how) == {"skill_md_read": 2}
