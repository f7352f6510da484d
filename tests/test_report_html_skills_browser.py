"""The skill sections of the HTML report in a real headless Chromium, in Chinese: the triggering
table, the routing matrix (its right, crossed and silent cells marked), an agent's workspace
changes and the repeats with pass@k are laid out and styled, and the untrusted names in them
(skill folders, sample ids, file paths and contents) are shown as text, never run."""

from __future__ import annotations

import json
from pathlib import Path

from cdp_pipe import Page
from cli_support import run_omk

HOSTILE_SKILL = "<b>pdf"  # a folder name may hold markup; skill names only exclude spaces and slashes
HOSTILE_FILE = "<img src=x onerror=window.__pwned=1>.md"
SAMPLES = f"""\
samples:
  - sample_id: pdf-<i>tables
    prompt: tables
    assertions:
      - {{type: skill_used, value: "{HOSTILE_SKILL}"}}
      - {{type: skill_used, value: docx, not: true}}
  - sample_id: letter
    prompt: letter
    assertions:
      - {{type: skill_used, value: docx}}
  - sample_id: near-miss
    prompt: what is a pdf
    assertions:
      - {{type: skill_used, value: "{HOSTILE_SKILL}", not: true}}
"""


def skill_call(name: str) -> dict:
    return {"tool": "Skill", "input": {"skill": name}, "output": "loaded"}


def run_in_chinese(tmp_path: Path) -> Path:
    for name in (HOSTILE_SKILL, "docx"):
        (tmp_path / "sk" / name).mkdir(parents=True)
        (tmp_path / "sk" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n", encoding="utf-8")
    (tmp_path / "omk.yaml").write_text("target: replay:r.jsonl\nskills: sk\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    workspace = {
        "created": [{"path": HOSTILE_FILE, "size": 40, "content": "<script>window.__pwned=1</script>", "truncated": False}],
        "changed": [{"path": "CHANGELOG.md", "size": 12, "content": "## 1.5.0\n", "truncated": True}],
        "deleted": [{"path": "old.txt", "size": 3}],
    }
    recorded = [
        {"sample_id": "pdf-<i>tables", "output": "done", "trace": {"tool_calls": [skill_call(HOSTILE_SKILL)], "workspace": workspace}},
        {"sample_id": "letter", "output": "done", "trace": {"tool_calls": [skill_call(HOSTILE_SKILL)]}},  # the wrong skill
        {"sample_id": "near-miss", "output": "a format", "trace": {"tool_calls": []}},
    ]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recorded), encoding="utf-8")
    proc = run_omk(
        "eval", "s.yaml", "--no-judge", "--repeat", "2", "--lang", "zh", "--out", "run", "--format", "json,html",
        cwd=tmp_path, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # `letter` fired the wrong skill
    return tmp_path / "run" / "report.html"


def texts(page: Page, selector: str) -> list[str]:
    return page.js(f"Array.from(document.querySelectorAll({json.dumps(selector)})).map(e => e.textContent)")


def test_the_skill_sections_render_in_chinese_styled_and_escaped(browser, tmp_path):
    page = Page(browser)
    page.goto(run_in_chinese(tmp_path).as_uri())

    assert page.js("document.getElementById('triggering').offsetHeight") > 0
    assert texts(page, "#triggering h2") == ["技能触发"]
    assert texts(page, "#triggering table.trigger-skills th")[:3] == ["技能", "召回率", "误触发"]
    assert texts(page, "#triggering table.trigger-skills tbody td:first-child") == [HOSTILE_SKILL, "docx"]
    assert texts(page, "#triggering h3") == ["路由：实际触发了哪个技能"]
    rows = page.js("Array.from(document.querySelectorAll('#triggering table.routing tr')).map(r => Array.from(r.cells).map(c => c.textContent).join(','))")
    assert rows == [f"期望 \\ 实际触发,{HOSTILE_SKILL},docx,（无）", f"{HOSTILE_SKILL} (2),2,·,·", "docx (2),2,·,·"]
    # the collision is marked and styled apart from a right call; counts are centred
    assert texts(page, "table.routing td.route-right") == ["2"]
    assert texts(page, "table.routing td.route-other") == ["2"]
    style = "(s => getComputedStyle(document.querySelector(s)))"
    assert page.js(f"{style}('table.routing td.route-other').backgroundColor") != page.js(f"{style}('table.routing td.route-right').backgroundColor")
    assert page.js(f"{style}('table.routing td.num').textAlign") == "center"
    assert page.js(f"{style}('table.trigger-skills').width") != page.js("getComputedStyle(document.querySelector('main')).width")  # sized to its content

    # repeats: the counts line, pass@k table right-aligned
    assert "每条用例运行 2 次" in page.js("document.getElementById('repeats').textContent")
    assert texts(page, "table.pass-k th") == ["k", "pass@k", "pass^k"]
    assert page.js(f"{style}('table.pass-k td').textAlign") == "right"
    assert len(texts(page, "table.repeats tbody tr")) == 3

    # the workspace of the first sample: kinds in Chinese, each coloured, the hostile path as text
    page.js("document.querySelectorAll('.detail').forEach(d => { d.hidden = false; })")
    assert texts(page, "table.workspace thead th")[:4] == ["工作区", "文件", "大小", "内容"]
    kinds = texts(page, "table.workspace tbody td:first-child")
    assert kinds[:3] == ["新建", "修改", "删除"]
    assert HOSTILE_FILE in texts(page, "table.workspace code")
    shown = page.js("document.querySelector('table.workspace').innerText")
    assert "33 个字符\n" in shown
    assert "9 个字符（开头部分）" in shown  # the length of the start kept, and whether it is cut
    created, deleted = (page.js(f"{style}('table.workspace tr.ws-{k} td').color") for k in ("created", "deleted"))
    assert created != deleted
    assert "工作区：没有文件被创建、修改或删除" not in page.js("document.body.innerText")  # replayed samples have no folder

    # nothing of the untrusted text became markup or ran
    assert page.js("document.querySelectorAll('#triggering b, main img, table.workspace script').length") == 0
    assert page.js("typeof window.__pwned") == "undefined"
    assert page.errors() == []
