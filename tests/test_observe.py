"""`omk observe`: how skills fire in sessions on disk. The analysis is checked on session records
built here (a small library with planted missed and false triggers, English and Chinese), the
probes it writes are loaded and checked by the doctor, and the JSON is read back through its records."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_support import run_omk

from omk.authoring.observed_probes import probes, write_probes
from omk.records.observe import FALSE_TRIGGER, MISSED, Observation
from omk.sessions import Session, SessionRequest, SessionToolCall, SkillFiring
from omk.sessions.likeness import TextSpace, content_words, cosine, stem, terms
from omk.sessions.observe import ObserveOptions, names_itself, observe, session_mask
from omk.sessions.skill_catalog import KnownSkill, default_roots, description_of, read_catalog

DESCRIPTIONS = {
    "pr-review": "Review a GitHub pull request: read the diff, run the tests, and write review comments on correctness, style and risk.",
    "db-migrate": "Write and check database schema migrations (Alembic, Django, SQL): add columns, rename tables, backfill data safely.",
    "changelog-zh": "为发布撰写中文更新日志：汇总合并的提交和拉取请求，按新功能、修复、破坏性变更分类。",
}
CATALOG = {name: KnownSkill(name, text, Path(f"/skills/{name}/SKILL.md")) for name, text in DESCRIPTIONS.items()}


def req(index: int, prompt: str, fired: tuple[str, ...] = (), how: str = "skill_call", calls: tuple[SessionToolCall, ...] = ()) -> SessionRequest:
    firings = tuple(SkillFiring(s, how, calls[0].id if calls and how == "skill_call" else None) for s in fired)  # type: ignore[arg-type]
    return SessionRequest(index, prompt, f"2026-03-0{index + 1}T10:00:00Z", calls, "done", firings)


def session(name: str, cli: str, project: str, requests: tuple[SessionRequest, ...], *, subagent: bool = False, installed: tuple[str, ...] = ()) -> Session:
    return Session(f"/sessions/{name}.jsonl", cli, name, project, None, requests, installed, (), (), subagent)  # type: ignore[arg-type]


def call(call_id: str, name: str, *, error: bool = False, denied: bool = False, output: str = "ok") -> SessionToolCall:
    return SessionToolCall(call_id, name, {}, output, error, denied)


REVIEW_CALLS = (
    call("t1", "Skill"),
    call("t2", "Bash", error=True, output="3 tests failed"),
    call("t3", "Bash", denied=True, output="The user doesn't want to proceed"),
    call("t4", "Read"),
)

# The planted answers: requests that should have fired a skill and did not, and requests where a
# skill fired on something unrelated.
PLANTED_MISSED = {
    ("pr-review", "Can you look over the diff in PR 57 and tell me whether the tests cover it?"),
    ("db-migrate", "Write a migration that renames the posts table to articles and backfills the slug column"),
    ("changelog-zh", "帮我整理这次发布的更新日志，把修复和新功能分开"),
}
PLANTED_FALSE = {
    ("db-migrate", "What's the weather like for the team offsite in Lisbon next week?"),
    ("pr-review", "Rename the variable foo to bar in utils.py"),
}


def library() -> list[Session]:
    shop = session("shop-1", "claude", "/work/shop", (
        req(0, "Please review pull request 42 and leave comments on the diff", ("pr-review",), calls=REVIEW_CALLS),
        req(1, "Add a nullable column discount_code to the orders table with a migration", ("db-migrate",)),
        req(2, "Can you look over the diff in PR 57 and tell me whether the tests cover it?"),
        req(3, "Fix the typo in the README heading"),
        req(4, "What's the weather like for the team offsite in Lisbon next week?", ("db-migrate",)),
    ))  # fmt: skip
    blog = session("blog-1", "codex", "/work/blog", (
        req(0, "$pr-review check PR 12", ("pr-review",), how="codex_injection"),
        req(1, "Write a migration that renames the posts table to articles and backfills the slug column"),
        req(2, "为 v2.3 版本撰写更新日志，汇总本次合并的拉取请求", ("changelog-zh",)),
        req(3, "帮我整理这次发布的更新日志，把修复和新功能分开"),
        req(4, "Rename the variable foo to bar in utils.py", ("pr-review",)),
    ))  # fmt: skip
    infra = session("infra-1", "claude", "/work/infra", (
        req(0, "Bump the terraform provider version to 5.2"),
        req(1, "yes"),
        req(2, "Review the pull request that updates the nginx config and comment on risky changes", ("pr-review",)),
    ))  # fmt: skip
    helper = session("infra-1-agent", "claude", "/work/infra", (req(0, "Summarise the nginx diff for the review", ("pr-review",)),), subagent=True)
    return [shop, blog, infra, helper]


def found(o: Observation, kind: str) -> set[tuple[str, str]]:
    return {(c.skill, c.prompt) for s in o.skills for c in (s.missed if kind == MISSED else s.false_triggers)}


def test_the_planted_missed_and_false_triggers_are_found_and_nothing_else():
    o = observe(library(), CATALOG)
    assert found(o, MISSED) == PLANTED_MISSED
    assert found(o, FALSE_TRIGGER) == PLANTED_FALSE


def test_rates_projects_and_calls_after_firing():
    o = observe(library(), CATALOG)
    by = {s.skill: s for s in o.skills}
    review = by["pr-review"]
    assert (o.sessions, o.subagent_sessions, o.requests) == (3, 1, 13)
    assert (review.firing.k, review.firing.n) == (4, 13)
    assert review.firing.low is not None
    assert review.firing.high is not None
    assert 0.09 < review.firing.low < 4 / 13 < review.firing.high < 0.6  # Wilson, 95%: [12.7%, 57.6%]
    assert dict(review.how) == {"skill_call": 3, "codex_injection": 1}
    assert review.subagent_firings == 1
    assert {(p.project, p.firing.k, p.firing.n) for p in review.projects} == {("/work/shop", 1, 5), ("/work/blog", 2, 5), ("/work/infra", 1, 3)}
    assert all(p.firing.low is not None and p.firing.low < p.firing.k / p.firing.n < (p.firing.high or 0) for p in review.projects)
    assert (review.troubled.k, review.troubled.n) == (1, 5)  # the subagent's firing included
    assert (review.calls_after, review.failed_after, review.denied_after) == (3, 1, 1)  # after the Skill call t1
    assert [(p.kind, p.tool, p.output) for p in review.problems] == [("failed", "Bash", "3 tests failed"), ("denied", "Bash", "The user doesn't want to proceed")]
    assert [s.skill for s in o.skills] == ["pr-review", "db-migrate", "changelog-zh"]  # most firings first


def test_a_missed_candidate_says_what_it_is_closest_to():
    o = observe(library(), CATALOG)
    migrate = next(s for s in o.skills if s.skill == "db-migrate")
    (miss,) = migrate.missed
    assert miss.score == miss.description_similarity > miss.request_similarity > 0.2
    assert miss.nearest_request == "/sessions/shop-1.jsonl#1"  # the request that fired it (index 1: the second)
    assert miss.where.cli == "codex"
    assert miss.where.project == "/work/blog"
    assert miss.where.index == 1


def test_a_skill_not_installed_in_a_session_is_never_missed_there():
    lib = library()
    lib[1] = session("blog-1", "codex", "/work/blog", lib[1].requests, installed=("pr-review", "changelog-zh"))
    o = observe(lib, CATALOG)
    assert ("db-migrate", "Write a migration that renames the posts table to articles and backfills the slug column") not in found(o, MISSED)
    migrate = next(s for s in o.skills if s.skill == "db-migrate")
    assert migrate.firing.n == 8  # shop's and infra's requests only


def test_a_listed_skill_never_fired_and_not_on_disk_is_named_once():
    lib = library()
    lib[0] = session("shop-1", "claude", "/work/shop", lib[0].requests, installed=("pr-review", "db-migrate", "changelog-zh", "dataviz"))
    o = observe(lib, CATALOG)
    assert o.not_found == ("dataviz",)
    assert "dataviz" not in {s.skill for s in o.skills}
    lib[0] = session("shop-1", "claude", "/work/shop", (req(0, "draw a chart of sales", ("dataviz",)),), installed=("dataviz",))
    assert "dataviz" in {s.skill for s in observe(lib, CATALOG).skills}  # fired: listed, with no description


def test_a_request_naming_the_skill_is_never_a_false_trigger():
    lone = session("x", "claude", "/p", (req(0, "/db-migrate please, then tell me a joke about penguins", ("db-migrate",)),))
    assert observe([lone], CATALOG).skills[0].false_triggers == ()
    assert names_itself("use $pr-review now", "pr-review")
    assert names_itself("/tools:pr-review", "pr-review")
    assert not names_itself("the pr-review skill", "pr-review")
    assert not names_itself("/pr-reviewer", "pr-review")


def test_since_leaves_out_earlier_requests():
    from datetime import UTC, datetime

    o = observe(library(), CATALOG, ObserveOptions(since=datetime(2026, 3, 4, tzinfo=UTC)))
    assert o.requests == 4  # the fourth and fifth requests of shop and blog
    assert o.since.startswith("2026-03-04")


def test_similarity_reads_chinese_and_english_alike():
    space = TextSpace([*DESCRIPTIONS.values(), "帮我整理更新日志", "修改数据库"])
    near = cosine(space.vector("帮我整理这次发布的更新日志"), space.vector(DESCRIPTIONS["changelog-zh"]))
    far = cosine(space.vector("修改数据库"), space.vector(DESCRIPTIONS["changelog-zh"]))
    assert near > 0.2 > far
    assert "日志" in terms("更新日志")
    assert "更新" in terms("更新日志")  # pairs of ideographs, as words
    assert stem("migrations") == stem("migration")
    assert stem("renamed") == stem("renaming") == stem("rename")
    assert stem("tests") == stem("test")
    assert content_words("yes, go on") < 3
    assert content_words("帮我整理更新日志") >= 3


def test_the_json_reads_back_through_its_records():
    o = observe(library(), CATALOG)
    text = json.dumps(o.to_json())
    again = Observation.loads(text)
    assert again.to_json() == json.loads(text)
    assert json.loads(text)["format"] == "omk-observe/1"


def test_a_report_of_another_format_is_refused():
    from omk.core.errors import InputError

    with pytest.raises(InputError, match="format"):
        Observation.loads('{"format": "omk-report/1"}', "x.json")


def test_probes_are_samples_the_doctor_accepts(tmp_path):
    from omk.doctor.diagnostics import sample_diagnostics
    from omk.loader import load_samples

    o = observe(library(), CATALOG)
    path = tmp_path / "probes.yaml"
    made = write_probes(o, path)
    assert made.samples == 5
    assert made.left_out == 0
    loaded = load_samples([path])
    checks = {(s.prompt, a.raw.get("value"), bool(a.raw.get("not"))) for s in loaded.samples for a in s.assertions}
    assert checks == {(p, skill, False) for skill, p in PLANTED_MISSED} | {(p, skill, True) for skill, p in PLANTED_FALSE}
    assert {s.provenance for s in loaded.samples} == {"production-trace"}
    errors = [d for d in sample_diagnostics(loaded.samples) if d.severity == "error"]
    assert errors == []
    assert path.read_text(encoding="utf-8").count("# from ") == 5  # each names its session
    with pytest.raises(Exception, match="already exists"):
        write_probes(o, path)


def test_a_request_that_is_a_candidate_for_two_skills_is_one_probe():
    lib = [session("s", "claude", "/p", (
        req(0, "Please review pull request 42 and leave comments on the diff", ("pr-review",)),
        req(1, "Review pull request 9: check the database migration that adds columns", ("db-migrate",)),
        req(2, "Add columns to the orders table with an Alembic migration", ("db-migrate",)),
    ))]  # fmt: skip
    o = observe(lib, CATALOG)
    text = probes(o).text
    assert text.count("sample_id:") == len({(c.where.session, c.where.index) for s in o.skills for c in (*s.missed, *s.false_triggers)})


def test_session_text_is_masked(tmp_path):
    env = {"HOME": "/home/ann", "GH_TOKEN": "ghs_abcdefghijklmnop1234"}
    mask = session_mask(env)
    assert mask("see /home/ann/code and ghs_abcdefghijklmnop1234") == "see ~/code and [redacted]"
    assert mask("cd /home/ann; ls /home/anna/x") == "cd ~; ls /home/anna/x"
    assert mask("key sk-ant-api03-abcdefghijklmnopqrstuvwx end") == "key [redacted] end"
    lone = session("x", "claude", "/home/ann/shop", (req(0, "Translate /home/ann/shop/notes.txt into French please", ("pr-review",)),))
    o = observe([lone, *library()], CATALOG, ObserveOptions(mask=mask))
    review = next(s for s in o.skills if s.skill == "pr-review")
    assert any(c.prompt == "Translate ~/shop/notes.txt into French please" and c.where.project == "~/shop" for c in review.false_triggers)


def test_descriptions_come_from_skill_folders(tmp_path):
    (tmp_path / "a" / "SKILL.md").parent.mkdir()
    (tmp_path / "a" / "SKILL.md").write_text("---\nname: a\ndescription: >\n  Folded text\n  on two lines.\n---\nBody\n", encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "SKILL.md").write_bytes(b"\xff\xfe not utf-8")
    (tmp_path / "c").mkdir()  # no SKILL.md: not a skill
    warnings: list[str] = []
    catalog = read_catalog([tmp_path, tmp_path / "a"], warnings)
    assert {n: k.description for n, k in catalog.items()} == {"a": "Folded text on two lines.", "b": ""}
    assert len(warnings) == 1
    assert "not UTF-8" in warnings[0]
    assert description_of("---\ndescription: [unclosed\n---\n") == "[unclosed"  # not YAML: read line by line
    roots = default_roots(["/p"], {"HOME": "/h", "CODEX_HOME": "/cx"})
    assert roots == [Path("/p/.claude/skills"), Path("/p/.codex/skills"), Path("/p/.agents/skills"),
                     Path("/h/.claude/skills"), Path("/cx/skills"), Path("/h/.agents/skills")]  # fmt: skip


def test_terminal_text_in_both_languages():
    from omk.report.observe import observation_lines

    o = observe(library(), CATALOG)
    en = "\n".join(observation_lines(o))
    assert "pr-review: fired in 4/13 31% [13%, 58%]" in en
    assert "candidate missed triggers" in en
    assert "candidate false triggers" in en
    assert not any(line.startswith(("#", "|")) or "**" in line for line in en.splitlines())  # plain text, no Markdown
    zh = "\n".join(observation_lines(o, "zh"))
    assert "候选" in zh
    assert "candidate missed triggers" not in zh


# The same library as hand-made session files in the formats the CLIs write: Claude Code's shop and
# infra projects (infra with a subagent), Codex's blog project, and the three skills' folders.
LIBRARY = Path(__file__).parent / "fixtures" / "observe"
SESSIONS = [str(LIBRARY / "claude"), str(LIBRARY / "codex")]


def omk(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_omk(*args, cwd=cwd, base=env, drop=(), columns=None, timeout=120)


def test_observe_finds_the_planted_triggers_in_session_files(tmp_path):
    done = omk("observe", *SESSIONS, "--skills", str(LIBRARY / "skills"), "--json")
    assert done.returncode == 0, done.stderr
    o = Observation.loads(done.stdout)
    assert found(o, MISSED) == PLANTED_MISSED
    assert found(o, FALSE_TRIGGER) == PLANTED_FALSE
    by = {s.skill: s for s in o.skills}
    assert (o.sessions, o.subagent_sessions, o.requests) == (3, 1, 13)
    assert (by["pr-review"].firing.k, by["pr-review"].firing.n) == (4, 13)
    assert by["pr-review"].subagent_firings == 1
    assert dict(by["pr-review"].how) == {"skill_call": 2, "skill_md_read": 1, "codex_injection": 1}
    assert (by["pr-review"].failed_after, by["pr-review"].denied_after) == (1, 1)
    assert [p.tool for p in by["changelog-zh"].problems] == ["shell_command"]  # git log exited 128


def test_observe_writes_probes_the_doctor_accepts(tmp_path):
    from omk.cli.main import main

    probes_file = tmp_path / "probes.yaml"
    done = omk("observe", *SESSIONS, "--skills", str(LIBRARY / "skills"), "--write-probes", str(probes_file))
    assert done.returncode == 0, done.stderr
    assert "trigger probes written: 5" in done.stderr
    assert "pr-review: fired in 4/13 31% [13%, 58%]" in done.stdout
    assert main(["doctor", str(probes_file)]) == 0
    again = omk("observe", *SESSIONS, "--write-probes", str(probes_file))
    assert again.returncode == 2
    assert "already exists" in again.stderr
    assert "Traceback" not in again.stderr


def test_observe_with_no_path_reads_the_project_sessions_and_skills(tmp_path):
    """Nothing named: the current project's Claude Code sessions under HOME, and the skills in the
    project's .claude/skills (no --skills)."""
    import re
    import shutil

    home = tmp_path / "home"
    project = home / "code" / "shop"  # the reader writes it `~/code/shop`
    shutil.copytree(LIBRARY / "skills", project / ".claude" / "skills")
    folder = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9-]", "-", str(project.resolve()))
    folder.mkdir(parents=True)
    text = next((LIBRARY / "claude" / "projects" / "-work-shop").glob("*.jsonl")).read_text(encoding="utf-8")
    (folder / "s.jsonl").write_text(text.replace('"/work/shop', json.dumps(str(project))[:-1]), encoding="utf-8")
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    done = omk("observe", "--json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    o = Observation.loads(done.stdout)
    assert o.sessions == 1
    assert o.requests == 5
    assert o.skills[0].projects[0].project == "~/code/shop"
    by = {s.skill: s for s in o.skills}
    assert by["db-migrate"].description.startswith("Write and check database schema migrations")
    assert {c.prompt for c in by["db-migrate"].false_triggers} == {"What's the weather like for the team offsite in Lisbon next week?"}


def test_observe_refuses_bad_input_in_one_line(tmp_path):
    for args in ([str(tmp_path / "missing.jsonl")], ["--since", "last tuesday"], ["--skills", str(tmp_path / "none")], ["--write-probes", str(tmp_path / "p.txt")]):
        done = omk("observe", *SESSIONS, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)


def test_no_session_found_is_said(tmp_path):
    done = omk("observe", str(tmp_path))
    assert done.returncode == 0
    assert "no session files found" in done.stderr
    assert "0 sessions, 0 requests" in done.stdout


def test_sessions_are_only_read(tmp_path):
    import shutil

    copy = tmp_path / "lib"
    shutil.copytree(LIBRARY, copy)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()}
    assert omk("observe", str(copy / "claude"), str(copy / "codex"), "--skills", str(copy / "skills")).returncode == 0
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()} == before


def test_omk_help_lists_observe():
    done = omk("--help")
    assert done.returncode == 0
    assert "observe" in done.stdout
    assert "how skills fire" in done.stdout


def test_hostile_session_files_are_warnings_not_tracebacks(tmp_path):
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    (tmp_path / "broken.jsonl").write_text('{"type": "user", "message": {"role": "user", "content": "hi"}\n{broken\n', encoding="utf-8")
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "\n", encoding="utf-8")
    (tmp_path / "unknown.jsonl").write_text('{"type": "brand-new-record", "x": 1}\n', encoding="utf-8")
    done = omk("observe", str(tmp_path), "--json")
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    o = Observation.loads(done.stdout)
    assert o.requests == 0
    assert o.skipped_records == 1
    assert any("broken.jsonl:2" in w for w in o.warnings)
    assert any("deep.jsonl:1" in w for w in o.warnings)
