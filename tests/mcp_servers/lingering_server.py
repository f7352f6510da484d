"""A real MCP server over stdio (the official SDK) that lingers, for the containment tests.

On start it writes `{"pid", "mark"}` to the file `LINGER_PROBE` names (`mark`: the `OMK_CALL_MARK`
it was given, or null), and leaves a helper behind that double-forks out of the process tree into
a session of its own and sleeps, carrying the server's environment (its pid in `LINGER_PROBE` +
".stray"). Its one tool, `wait(seconds)`, sleeps that long before answering (having written
`LINGER_PROBE` + ".called"), so a call to it outlives any sample timeout.
"""

from __future__ import annotations

import json
import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("omk-test-linger", log_level="ERROR")


@server.tool()
def wait(seconds: float) -> str:
    """Sleep, then say so (`LINGER_PROBE` + ".called" says the call began)."""
    with open(os.environ["LINGER_PROBE"] + ".called", "w", encoding="utf-8") as f:
        f.write(str(seconds))
    time.sleep(seconds)
    return f"waited {seconds}s"


def leave_a_stray(probe: str) -> None:
    """A grandchild adopted by init, in a session of its own: no descendant of anything any more."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(probe + ".stray.tmp", "w", encoding="utf-8") as f:
                f.write(str(os.getpid()))
            os.rename(probe + ".stray.tmp", probe + ".stray")
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # not holding the server's pipes: the CLI must not wait on them
                os.dup2(devnull, fd)
            time.sleep(300)
        os._exit(0)
    os.wait()


if __name__ == "__main__":
    probe = os.environ["LINGER_PROBE"]
    with open(probe + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"pid": os.getpid(), "mark": os.environ.get("OMK_CALL_MARK")}, f)
    os.rename(probe + ".tmp", probe)
    leave_a_stray(probe)
    server.run("stdio")
