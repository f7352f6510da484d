"""`skill_used`: what counts as invoking a skill, `threshold` / `max`, `not`, a skill the run does
not install, bad input at load, several skills from `skills:`, and doctor's negative-control rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import run_omk
from helpers import make_ctx, make_spec, run
from loader_helpers import one_problem

from omk.core.errors import ConfigError, InputError
from omk.doctor.diagnostics import skill_controls
from omk.domain.skillset import fired, invoked_skill, read_skill_paths
from omk.engine.skill_checks import check_skill_names
from omk.records import ToolCall, Trace
from omk.samples.model import Sample

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n"


def used(calls: list[ToolCall], skills: tuple[str, ...] | None = ("pdf", "docx"), **fields):
    spec = make_spec("skill_used", **fields)
    return run(spec, make_ctx(trace=Trace(tool_calls=calls), skills=skills))[0]


SKILL_PDF = ToolCall("Skill", {"skill": "pdf"}, "Launching skill: pdf")
READ_DOCX = ToolCall("Read", {"file_path": "/tmp/w/.claude/skills/docx/SKILL.md"}, "---\nname: docx")


def test_a_skill_tool_call_naming_the_skill_passes_and_its_count_is_the_metric():
    result = used([SKILL_PDF, ToolCall("Bash", {"command": "ls"}, "")], value="pdf")
    assert result.passed
    assert result.metric == 1
    assert result.message == "skill pdf invoked 1 time(s) >= 1"


def test_a_read_of_its_skill_md_counts_too_and_other_skills_are_named_on_failure():
    assert used([READ_DOCX], value="docx").passed
    miss = used([READ_DOCX], value="pdf")
    assert not miss.passed
    assert miss.metric == 0
    assert miss.message == "skill pdf invoked 0 time(s) < 1; fired instead: docx"


def test_what_counts_as_an_invocation():
    assert invoked_skill(ToolCall("Skill", {"skill": "office:pdf"}, None)) == "pdf"  # a plugin's skill
    assert invoked_skill(ToolCall("Skill", {"command": "/pdf"}, None)) == "pdf"  # older CLIs
    assert invoked_skill(ToolCall("read_file", {"path": "skills\\pdf\\SKILL.md"}, None)) == "pdf"  # an alias, Windows path
    assert invoked_skill(ToolCall("Read", {"file_path": "docs/pdf/README.md"}, None)) is None
    assert invoked_skill(ToolCall("Bash", {"command": "cat pdf/SKILL.md"}, None)) is None  # not under a skills folder
    # Codex loads a skill with a shell read of its SKILL.md
    assert invoked_skill(ToolCall("Bash", {"command": "sed -n '1,200p' /h/.codex/skills/pdf/SKILL.md"}, None)) == "pdf"
    assert invoked_skill(ToolCall("Bash", {"command": "cat skills/pdf/SKILL.md.bak"}, None)) is None
    assert invoked_skill(ToolCall("Skill", "pdf", None)) is None  # an input that is not an object
    assert fired([SKILL_PDF, READ_DOCX, SKILL_PDF]) == {"pdf": 2, "docx": 1}


def test_threshold_and_max_bound_the_number_of_invocations():
    twice = [SKILL_PDF, SKILL_PDF]
    assert not used([SKILL_PDF], value="pdf", threshold=2).passed
    assert used(twice, value="pdf", threshold=2).passed
    over = used(twice, value="pdf", max=1)
    assert not over.passed
    assert over.message == "skill pdf invoked 2 time(s) > max 1"
    assert used(twice, value="pdf", threshold=1, max=2).message == "skill pdf invoked 2 time(s) within 1..2"


def test_not_is_the_negative_control():
    assert used([], value="pdf", **{"not": True}).passed
    assert not used([SKILL_PDF], value="pdf", **{"not": True}).passed


def test_a_skill_the_run_does_not_install_fails_and_its_not_form_passes():
    calls = [ToolCall("Skill", {"skill": "pdf"}, "Unknown skill: pdf", is_error=True)]
    missing = used(calls, skills=(), value="pdf")
    assert not missing.passed
    assert missing.message == "skill pdf is not installed in this run (installed: none)"
    assert used(calls, skills=(), value="pdf", **{"not": True}).passed
    assert used([SKILL_PDF], skills=None, value="pdf").passed  # a target that does not say: the trace decides


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        ("{type: skill_used}", 'assertions[0]: "value" is required for type "skill_used"'),
        ("{type: skill_used, value: 3}", "assertions[0].value: must be a string (got number 3)"),
        ("{type: skill_used, value: a/b}", "assertions[0].value: 'a/b' is not a skill name: a skill is named after its folder (no spaces, / or \\)"),
        ("{type: skill_used, value: pdf, max: -1}", "assertions[0].max"),
        ("{type: skill_used, value: pdf, threshold: 2, max: 1}", "assertions[0].max: max (1) is below threshold (2): nothing could pass"),
    ],
)
def test_bad_input_is_one_line_with_file_line_and_field(tmp_path, assertion, message):
    line = one_problem(tmp_path, HEAD + "    assertions:\n      - " + assertion + "\n")
    assert line.startswith("s.yaml:5: samples[0] (a) " + message), line


def _sample(tmp_path: Path, *assertions: str) -> list[Sample]:
    from loader_helpers import load

    body = "".join(f"      - {a}\n" for a in assertions)
    return load(tmp_path, "s.yaml", HEAD + "    assertions:\n" + body).samples


def test_a_name_no_variant_installs_is_a_load_error_naming_the_installed_ones(tmp_path):
    samples = _sample(tmp_path, "{type: contains, value: x}", "{type: skill_used, value: pfd}")
    with pytest.raises(InputError) as info:
        check_skill_names(samples, [("pdf", "docx"), ()])  # a treatment with the skills, a baseline without
    assert [line.replace(f"{tmp_path}/", "") for line in info.value.lines()] == [
        "s.yaml:6: samples[0] (a) assertions[1].value: skill_used names 'pfd', which this run does not install; installed: docx, pdf"
    ]
    check_skill_names(samples, [("pfd",), ()])  # installed by one variant: no error, the baseline just fails it
    check_skill_names(samples, [None])  # the target does not say what it installs


def _skill(folder: Path, name: str) -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}\n---\n", encoding="utf-8")
    return folder / name


def test_skills_are_a_list_of_folders_or_a_folder_of_skill_folders(tmp_path):
    library = tmp_path / "library"
    for name in ("pdf", "docx"):
        _skill(library, name)
    (library / "notes").mkdir()  # no SKILL.md: not a skill
    assert [s.name for s in read_skill_paths(str(library))] == ["docx", "pdf"]
    assert [s.name for s in read_skill_paths([str(library / "pdf"), str(library / "docx")])] == ["pdf", "docx"]
    with pytest.raises(ConfigError, match="two skills are named 'pdf'"):
        read_skill_paths([str(library), str(library / "pdf")])
    with pytest.raises(ConfigError, match="without a SKILL.md and without skill folders"):
        read_skill_paths(str(library / "notes"))
    (tmp_path / "one.md").write_text("be brief", encoding="utf-8")
    with pytest.raises(ConfigError, match="several skills must be folders"):
        read_skill_paths([str(tmp_path / "one.md"), str(library / "pdf")])


def test_omk_eval_refuses_a_misspelt_skill_with_exit_2(tmp_path):
    _skill(tmp_path / "skills", "pdf")
    (tmp_path / "omk.yaml").write_text("target: replay:r.jsonl\nskills: [skills/pdf]\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"sample_id": "a", "output": "x"}\n', encoding="utf-8")
    (tmp_path / "s.yaml").write_text(HEAD + "    assertions:\n      - {type: skill_used, value: pfd}\n", encoding="utf-8")
    proc = run_omk("eval", "s.yaml", "--no-judge", "--quiet", cwd=tmp_path, drop=(), columns=None)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "s.yaml:5: samples[0] (a) assertions[0].value: skill_used names 'pfd', which this run does not install; installed: pdf"


def test_doctor_warns_about_a_skill_without_negative_controls(tmp_path):
    only_positive = _sample(tmp_path, "{type: skill_used, value: pdf}")
    [found] = skill_controls(only_positive)
    assert found.kind == "skill_no_negative_control"
    assert found.severity == "warning"
    assert "fires on everything scores perfect recall" in found.message
    assert found.detail["skill"] == "pdf"
    both = _sample(tmp_path / "b", "{type: skill_used, value: pdf}", "{type: skill_used, value: pdf, not: true}")
    assert skill_controls(both) == []
