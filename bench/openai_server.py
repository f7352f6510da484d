"""A lean OpenAI-compatible Chat Completions server on 127.0.0.1 for the benchmarks.

    python bench/openai_server.py [--delay 0.05] [--port 0] [--max-seconds 900] [--vary]

Answers every `POST /v1/chat/completions` after `--delay` seconds with a short text reply
(HTTP/1.1 keep-alive, plain asyncio streams: no framework in the way). With `--vary` the reply
is one of a few, chosen by a hash of the request body, some of which miss what the benchmark
samples check; a request with a system message gets a flawed reply less often. So an
experiment's variants get different, reproducible scores sample by sample, and its statistics
work on realistic paired differences rather than all zeros. `GET /stats` returns
`{"calls": N}`, the completions answered so far. Prints `PORT <n>` on its first line once it
listens, and stops by itself after `--max-seconds`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import zlib

REPLY = "The lookup concatenates user input into SQL: an injection. Use parameterized queries and bind the value."
FLAWED = (
    "The lookup concatenates user input into SQL. Use parameterized queries and bind the value.",  # no "injection"
    "The lookup concatenates user input into SQL: an injection. Escape the value.",  # no parameterized query
)


def pick_reply(body: bytes, request: dict) -> str:
    """`REPLY`, or a flawed reply for about half the requests (a third with a system message)."""
    system = any(isinstance(m, dict) and m.get("role") == "system" for m in request.get("messages") or [])
    slot = zlib.crc32(body) % (6 if system else 4)
    return FLAWED[slot] if slot < len(FLAWED) else REPLY


class Server:
    def __init__(self, delay: float, vary: bool = False):
        self.delay = delay
        self.vary = vary
        self.calls = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                if method == "POST" and path.endswith("/chat/completions"):
                    await asyncio.sleep(self.delay)
                    self.calls += 1
                    request = json.loads(body or b"{}")
                    model = request.get("model", "bench")
                    payload = {
                        "id": f"chatcmpl-{self.calls}",
                        "object": "chat.completion",
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": pick_reply(body, request) if self.vary else REPLY}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 20, "completion_tokens": 20, "total_tokens": 40},
                    }
                    status = "200 OK"
                elif method == "GET" and path == "/stats":
                    payload, status = {"calls": self.calls}, "200 OK"
                else:
                    payload, status = {"error": {"message": f"no route {method} {path}"}}, "404 Not Found"
                data = json.dumps(payload).encode()
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


async def serve(delay: float, port: int, max_seconds: float, vary: bool = False) -> None:
    server = Server(delay, vary)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", port, backlog=512)
    print(f"PORT {listener.sockets[0].getsockname()[1]}", flush=True)
    async with listener:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(listener.serve_forever(), max_seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds before each answer (default 0.05)")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--max-seconds", type=float, default=900, help="stop after this long (default 900)")
    parser.add_argument("--vary", action="store_true", help="vary the reply by request (see above)")
    args = parser.parse_args()
    asyncio.run(serve(args.delay, args.port, args.max_seconds, args.vary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
