from omk.model import Sample
from omk.targets.prompt import ENV_CLOSING, ENV_HEADER, compose_prompt


def test_prompt_alone_is_unchanged():
    assert compose_prompt(Sample("a", "Hello")) == "Hello"


def test_context_is_fenced_after_a_blank_line():
    s = Sample("a", "审查这段代码", context="x = 1\n")
    assert compose_prompt(s) == "审查这段代码\n\n```\nx = 1\n\n```"


def test_environment_section_comes_first_with_separator():
    env = {"cli_available": ["git", "rg"], "files_available": ["src/a.py"], "notes": "  Ubuntu  "}
    text = compose_prompt(Sample("a", "Fix it", context="ctx", environment=env))
    head, body = text.split("\n\n---\n\n")
    assert body == "Fix it\n\n```\nctx\n```"
    lines = head.splitlines()
    assert lines[0] == ENV_HEADER and lines[1] == ""
    assert "  - `git`" in lines and "  - `rg`" in lines and "  - `src/a.py`" in lines
    assert lines[-3] == "- 备注：Ubuntu"
    assert lines[-1] == ENV_CLOSING


def test_empty_environment_adds_nothing():
    env = {"cli_available": [], "files_available": [" "], "notes": "  "}
    assert compose_prompt(Sample("a", "Hi", environment=env)) == "Hi"
