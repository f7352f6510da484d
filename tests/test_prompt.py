from omk.domain.compose import ENV_CLOSING, ENV_HEADER, compose_prompt, said_by_user
from omk.samples.model import Sample


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
    assert lines[0] == ENV_HEADER
    assert lines[1] == ""
    assert "  - `git`" in lines
    assert "  - `rg`" in lines
    assert "  - `src/a.py`" in lines
    assert lines[-3] == "- 备注：Ubuntu"
    assert lines[-1] == ENV_CLOSING


def test_empty_environment_adds_nothing():
    env = {"cli_available": [], "files_available": [" "], "notes": "  "}
    assert compose_prompt(Sample("a", "Hi", environment=env)) == "Hi"


def test_what_the_user_said_is_taken_back_out_of_the_composed_prompt():
    env = {"cli_available": ["git"], "notes": "Ubuntu"}
    assert said_by_user(compose_prompt(Sample("a", "Fix it", context="ctx", environment=env))) == "Fix it"
    assert said_by_user(compose_prompt(Sample("a", "Fix it", context="ctx"))) == "Fix it"
    # a prompt of the user's own that looks like a section and a rule is theirs, not an environment
    mine = "## Plan\n\n---\n\nstep one"
    assert said_by_user(compose_prompt(Sample("a", mine))) == mine
    assert said_by_user(compose_prompt(Sample("a", mine, environment=env))) == mine
