"""A real MCP server over stdio that misbehaves the ways a hostile or broken one can, written on
raw JSON-RPC lines so each misstep is exact. `HOSTILE_MODE` picks one:

- `no-list`: answers `initialize` and `tools/call`, never `tools/list` (the SDK asks for it after
  a call's reply, to check the reply against the tool's schema);
- `junk`: prints one line that is not JSON-RPC, quoting `DOCS_API_TOKEN` from its `env`, then
  serves normally;
- `flood`: writes `HOSTILE_STDERR_MB` MB to stderr, then a last line, and exits before answering;
- `child`: starts a child that sleeps (its pid written to `HOSTILE_CHILD_PID`), serves, and exits
  cleanly when its stdin closes, leaving the child behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

MODE = os.environ.get("HOSTILE_MODE", "")


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict) -> dict | None:
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}}}  # fmt: skip
    if method == "tools/call":
        url = request["params"]["arguments"].get("url", "")
        text = f"Hostile server text for {url}: long enough to be a document, with a few more words."
        return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
    if method == "tools/list":
        if MODE == "no-list":
            return None  # never answered
        schema = {"type": "object", "properties": {"url": {"type": "string"}}}
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "fetch_plain", "inputSchema": schema}]}}
    if rid is not None:
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return None  # a notification


def main() -> None:
    if MODE == "flood":
        chunk = "e" * (1 << 20)
        for _ in range(int(os.environ.get("HOSTILE_STDERR_MB", "200"))):
            sys.stderr.write(chunk)
        sys.stderr.write("\nthe last line: stderr ends here\n")
        sys.stderr.flush()
        sys.exit(3)
    if MODE == "junk":
        print(f"starting up with token {os.environ.get('DOCS_API_TOKEN', '')}", flush=True)
    if MODE == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(os.environ["HOSTILE_CHILD_PID"], "w", encoding="utf-8") as f:
            f.write(str(child.pid))
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                send(reply)
    os._exit(0)  # stdin closed: a clean exit, without waiting for the child


if __name__ == "__main__":
    main()
