"""No secret in any artifact: loopback fakes that echo the key they were sent (in replies, tool
calls, error bodies, a judge's reasoning, placed where a cut would split them), a `cmd:` program
that prints its environment, and every file of the run folders and the cache grepped for the key
and for any 10-character piece of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import run_omk

from omk.core.secrets import REDACTED, Masker, configured_secrets, secret_env_names
from omk.testing import Garbage, HttpError, ModelServer
from omk.testing.anthropic import text_reply as anthropic_text
from omk.testing.openai_chat import text_reply, tool_call_reply

OPENAI_KEY = "sk-leak-4f1d9a7c2b6e8a0d3c5f7e9b1a2c4d6e"
ANTHROPIC_KEY = "sk-ant-leak-9e8d7c6b5a4f3e2d1c0b9a8f"
CUSTOM_KEY = "corp-llm-0a1b2c3d4e5f60718293"  # named by api_key_env, its name says nothing
GH_TOKEN = "ghp_leak_5c4b3a2918273645"


def pieces(secret: str, n: int = 10) -> list[bytes]:
    return [secret[i : i + n].encode() for i in range(len(secret) - n + 1)]


def assert_clean(paths: list[Path], texts: list[str], secrets: list[str]) -> None:
    files = [p for root in paths for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file()]
    assert files, paths
    for secret in secrets:
        for piece in pieces(secret):
            for path in files:
                assert piece not in path.read_bytes(), (path, piece)
            for text in texts:
                assert piece.decode() not in text, piece


def omk(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_omk(*args, cwd=cwd, env=env, drop=("OPENAI_", "ANTHROPIC_", "OMK_"), columns=200, timeout=180)


def echo_target(request) -> object:
    """The target's server: echoes its key in every way a careless or hostile server could."""
    key = request.headers["authorization"].removeprefix("Bearer ")
    prompt = next(m["content"] for m in request.json["messages"] if m["role"] == "user")
    has_result = any(m.get("role") == "tool" for m in request.json["messages"])
    if "reply" in prompt:
        return text_reply(f"Your key is {key}; again: {key}.")
    if "tool" in prompt and not has_result:
        return tool_call_reply([("lookup", {"token": key, "q": "A1"})])
    if "tool" in prompt:
        return text_reply("done with the tool")
    if "split" in prompt:  # the key straddles the 200-character excerpt of an error message
        return HttpError(400, {"error": {"message": "x" * 190 + f" bad key {key} rejected"}})
    if "garbage" in prompt:
        return Garbage(body=("<html>" + "y" * 180 + key + "</html>").encode())
    return HttpError(401, {"error": {"message": f"Incorrect API key provided: {key}"}})


def echo_judge(request) -> object:
    key = request.headers["x-api-key"]
    return anthropic_text(json.dumps({"reasoning": f"the judge saw {key}", "score": 4, "reason": f"key {key}"}))


@pytest.fixture()
def keyed_project(tmp_path: Path) -> Path:
    prompts = {"reply": "reply please", "tool": "use the tool", "split": "split error", "garbage": "garbage body", "denied": "denied"}
    samples = [
        {
            "sample_id": sid,
            "prompt": prompt,
            "rubric": "Answers the question.",
            "mocks": [{"tool": "lookup", "return": {"status": "ok"}}],
            "assertions": [{"type": "contains", "value": "key"}],
        }
        for sid, prompt in prompts.items()
    ]
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    (tmp_path / "omk.yaml").write_text("target: openai:gpt-4o-mini\njudge: anthropic:claude-judge\nretries: 0\n", encoding="utf-8")
    return tmp_path


def test_echoed_keys_reach_no_artifact_log_or_cache(keyed_project):
    with ModelServer.for_openai(echo_target) as target, ModelServer(echo_judge) as judge:
        env = {
            "OPENAI_BASE_URL": target.url,
            "OPENAI_API_KEY": OPENAI_KEY,
            "ANTHROPIC_BASE_URL": judge.url,
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "GH_TOKEN": GH_TOKEN,
        }
        run = keyed_project / "run"
        proc = omk(["eval", "eval-samples.yaml", "--out", str(run), "--format", "json,junit,md,html"], keyed_project, env)
        assert proc.returncode in (0, 1), proc.stderr
        again = omk(["eval", "eval-samples.yaml", "--out", str(keyed_project / "run2")], keyed_project, env)  # cached replies
        rerender = omk(["report", str(run), "--format", "html,md,junit", "--out", str(keyed_project / "rendered")], keyed_project, env)
        assert rerender.returncode == 0, rerender.stderr
        assert all(r.headers["authorization"] == f"Bearer {OPENAI_KEY}" for r in target.requests)  # the key was sent
    results = {r["sample_id"]: r for r in json.loads((run / "report.json").read_text(encoding="utf-8"))["results"]}
    assert results["reply"]["output"] == f"Your key is {REDACTED}; again: {REDACTED}."
    assert results["tool"]["trace"]["tool_calls"][0]["input"]["token"] == REDACTED
    assert "bad key" in results["split"]["error"]  # the key was where the 200-character excerpt ends
    assert results["denied"]["error"].endswith(f"Incorrect API key provided: {REDACTED}")
    judged = results["reply"]["judge"]
    assert judged is not None
    assert "the judge saw [redacted]" in json.dumps(judged)
    cache = sorted((keyed_project / ".omk").glob("cache.sqlite*"))
    assert cache, "the run used the cache"
    assert_clean(
        [run, keyed_project / "run2", keyed_project / "rendered", keyed_project / ".omk"],
        [proc.stdout, proc.stderr, again.stdout, again.stderr, rerender.stdout, rerender.stderr],
        [OPENAI_KEY, ANTHROPIC_KEY, GH_TOKEN],
    )


PRINTS_ENV = r"""
import json, os, sys
sys.stdin.readline()
keys = [os.environ[k] for k in ("OPENAI_API_KEY", "CORP_LLM", "GH_TOKEN")]
if os.environ.get("MODE") == "fail":
    # the key straddles the 500-character tail of stderr kept in the error message
    sys.stderr.write("e" * 10 + keys[1] + "z" * 480)
    sys.exit(4)
print(json.dumps({"type": "response", "output": "env: " + " ".join(keys)}))
"""


@pytest.mark.parametrize("mode", ["ok", "fail"])
def test_a_command_that_prints_its_environment_is_masked(tmp_path, mode):
    (tmp_path / "agent.py").write_text(PRINTS_ENV, encoding="utf-8")
    (tmp_path / "eval-samples.yaml").write_text(
        yaml.safe_dump({"samples": [{"sample_id": "s", "prompt": "hi", "assertions": [{"type": "contains", "value": "env"}]}]}),
        encoding="utf-8",
    )
    (tmp_path / "omk.yaml").write_text(
        f"target: cmd:{sys.executable} agent.py\nopenai:\n  api_key_env: CORP_LLM\n", encoding="utf-8"
    )
    env = {"OPENAI_API_KEY": OPENAI_KEY, "CORP_LLM": CUSTOM_KEY, "GH_TOKEN": GH_TOKEN, "MODE": mode}
    proc = omk(["eval", "eval-samples.yaml", "--out", str(tmp_path / "run"), "--format", "json,junit,md,html"], tmp_path, env)
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]
    if mode == "ok":
        assert result["output"] == f"env: {REDACTED} {REDACTED} {REDACTED}"
    else:
        assert result["status"] == "error"
        assert "exited with code 4" in result["error"]
    assert_clean([tmp_path / "run", tmp_path / ".omk"], [proc.stdout, proc.stderr], [OPENAI_KEY, CUSTOM_KEY, GH_TOKEN])


def test_secret_names_and_values():
    env = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "GITHUB_TOKEN": GH_TOKEN,
        "AWS_SECRET_ACCESS_KEY": "abcd1234efgh5678",
        "DB_PASSWORD": "hunter2hunter2",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",  # a path, not a secret
        "TOKENIZERS_PARALLELISM": "false",
        "PWD": "/home/me",
        "SHORT_TOKEN": "on",  # too short to be a key
        "MY_LLM": CUSTOM_KEY,
    }
    assert set(secret_env_names(env)) == {"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "SHORT_TOKEN"}
    values = configured_secrets({"openai": {"api_key_env": "MY_LLM"}}, env)
    assert set(values) == {OPENAI_KEY, GH_TOKEN, "abcd1234efgh5678", "hunter2hunter2", CUSTOM_KEY}


def test_masking_comes_before_the_cut_and_pieces_at_the_edges_are_masked():
    mask = Masker([OPENAI_KEY])
    text = "a" * 95 + OPENAI_KEY + "b" * 100
    assert OPENAI_KEY[:5] not in mask.clip(text, 100)  # cut after masking: no half key
    assert mask.clip(text, 100) == "a" * 95 + REDACTED[:5]
    tail = OPENAI_KEY[12:] + " then the rest"  # a buffer that kept only the key's end
    assert mask.cut_edges(tail) == f"{REDACTED} then the rest"
    head = "the start and " + OPENAI_KEY[:20]  # a stream stopped mid-key
    assert mask.cut_edges(head) == f"the start and {REDACTED}"
    assert mask.cut_edges("short abc") == "short abc"
    nested = {"a": [OPENAI_KEY, {"k": f"x{OPENAI_KEY}y"}], OPENAI_KEY: 1}
    assert mask.value(nested) == {"a": [REDACTED, {"k": f"x{REDACTED}y"}], REDACTED: 1}


def test_the_last_pass_walks_a_report_only_when_a_secret_is_in_it():
    from omk.core.secrets import Masker

    mask = Masker(["sk-live-0123456789abcdef"])
    clean = {"results": [{"output": "nothing to hide", "trace": {"tool_calls": [{"input": {"q": "x"}}]}}]}
    assert mask.value_if_present(clean) is clean  # untouched: no walk, no copy
    dirty = {"results": [{"output": "key sk-live-0123456789abcdef here", "n": 1.5}]}
    assert mask.value_if_present(dirty) == {"results": [{"output": "key [redacted] here", "n": 1.5}]}
    quoted = Masker(['sk-"quoted"-0123456789'])  # escaped in JSON text: always walked
    assert quoted.value_if_present({"o": 'a sk-"quoted"-0123456789 b'}) == {"o": "a [redacted] b"}


KEYED_AGENT = """
import json, sys
sys.stdin.readline()
print(json.dumps({"type": "response", "output": "ok " + sys.argv[-1][:3]}), flush=True)
"""
HOOK_SAYS_THE_KEY = """
import os
def check(output, ctx):
    return {"pass": False, "message": "I saw " + os.environ["CORP_LLM"] + " and " + os.environ["OPENAI_API_KEY"]}
"""
HOOK_RAISES_THE_KEY = """
import os
def check(output, ctx):
    raise RuntimeError("bad key " + os.environ["OPENAI_API_KEY"])
"""
HOOK_CRASHES_WITH_THE_KEY = """
import os, sys
def check(output, ctx):
    sys.stderr.write("fatal: token " + os.environ["CORP_LLM"] + "\\n")
    sys.stderr.flush()
    os._exit(3)
"""


@pytest.mark.parametrize("where", ["--target", "OMK_TARGET"])
def test_a_key_in_the_target_spec_and_in_hook_messages_reaches_no_file_or_terminal(tmp_path, where):
    for name, text in (("agent.py", KEYED_AGENT), ("says.py", HOOK_SAYS_THE_KEY), ("raises.py", HOOK_RAISES_THE_KEY), ("crashes.py", HOOK_CRASHES_WITH_THE_KEY)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    hooks = [{"type": "custom", "fn": f} for f in ("says.py", "raises.py", "crashes.py")]
    nested = {"type": "assert-set", "children": [{"type": "custom", "fn": "says.py"}]}
    (tmp_path / "s.yaml").write_text(
        yaml.safe_dump({"samples": [{"sample_id": "s", "prompt": "hi", "assertions": [*hooks, nested]}]}), encoding="utf-8"
    )
    (tmp_path / "omk.yaml").write_text("openai:\n  api_key_env: CORP_LLM\n", encoding="utf-8")
    spec = f"cmd:{sys.executable} agent.py --key {OPENAI_KEY}"
    env = {"OPENAI_API_KEY": OPENAI_KEY, "CORP_LLM": CUSTOM_KEY}
    args = ["eval", "s.yaml", "--out", "run", "--format", "json,junit,md,html"]
    if where == "--target":
        args += ["--target", spec]
    else:
        env["OMK_TARGET"] = spec
    proc = omk(args, tmp_path, env)
    assert proc.returncode == 1, proc.stderr
    manifest = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["target"] == f"cmd:{sys.executable} agent.py --key {REDACTED}"
    lines = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    messages = [a["message"] for a in lines[0]["assertions"]]
    assert messages[0] == f"I saw {REDACTED} and {REDACTED}"
    assert REDACTED in messages[1] and REDACTED in messages[2], messages
    assert lines[0]["assertions"][3]["children"][0]["message"] == f"I saw {REDACTED} and {REDACTED}"
    assert_clean([tmp_path / "run", tmp_path / ".omk"], [proc.stdout, proc.stderr], [OPENAI_KEY, CUSTOM_KEY])
    if where == "--target":  # resuming cannot run the masked spec: one clear line
        resumed = omk(["eval", "--resume", "run"], tmp_path, env)
        assert resumed.returncode == 2 and "cli.target: the recorded spec held a secret" in resumed.stderr, resumed.stderr


def test_an_assertion_is_copied_only_when_a_secret_is_in_it():
    from omk.core.secrets import Masker
    from omk.records import AssertionResult
    from omk.runner.grading import masked
    from omk.samples.model import Layer, Status

    mask = Masker(["sk-secret-value-123456"])
    leaf = AssertionResult(type="contains", layer=Layer.FACT, status=Status.PASSED, weight=1.0, negate=False, message="output contains 'hi'")
    clean = AssertionResult(type="assert-set", layer=Layer.FACT, status=Status.PASSED, weight=1.0, negate=False, message="1/1", children=(leaf,))
    assert masked(clean, mask) is clean
    leaky = AssertionResult(type="custom", layer=Layer.FACT, status=Status.FAILED, weight=1.0, negate=False, message="key sk-secret-value-123456 seen")
    outer = masked(AssertionResult(type="assert-set", layer=Layer.FACT, status=Status.FAILED, weight=1.0, negate=False, children=(leaf, leaky)), mask)
    assert outer.children[0] is leaf
    assert outer.children[1].message == "key [redacted] seen"
