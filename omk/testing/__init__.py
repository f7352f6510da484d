"""A scripted model for tests and offline dry runs: `omk serve-model SCRIPT.yaml` from a shell,
`ModelServer` from Python, the `scripted_model` fixture under pytest.

    from omk.testing import ModelServer, load_script
    with ModelServer(load_script(Path("model.yaml"))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.root       # Claude Code, anthropic: targets
        os.environ["OPENAI_BASE_URL"] = server.openai_url    # openai: targets, Codex
        ...
        server.requests                                      # every request, as received

docs/targets.md ("Dry-run an agent offline") describes the script format. `omk.testing.mcp_agent`
is an example agent that reaches the samples' mocks over MCP (docs/targets.md, "Any agent, over
MCP"); it is run as a program, not imported here.
"""

from __future__ import annotations

from omk.testing.script import ModelScript, load_script
from omk.testing.server import ModelServer
from omk.testing.steps import Drop, Garbage, HttpError, Request, ScriptTurn, Slow, Stream, ToolRequest

__all__ = [
    "Drop",
    "Garbage",
    "ModelScript",
    "ModelServer",
    "ScriptTurn",
    "Request",
    "Slow",
    "HttpError",
    "Stream",
    "ToolRequest",
    "load_script",
]
