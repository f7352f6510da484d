"""A lean OpenAI-compatible Chat Completions server on 127.0.0.1 for the benchmarks.

    python bench/openai_server.py [--delay 0.05] [--port 0] [--max-seconds 900]

Answers every `POST /v1/chat/completions` after `--delay` seconds with a short text reply
(HTTP/1.1 keep-alive, plain asyncio streams: no framework in the way). `GET /stats` returns
`{"calls": N}`, the completions answered so far. Prints `PORT <n>` on its first line once it
listens, and stops by itself after `--max-seconds`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys

REPLY = "The lookup concatenates user input into SQL: an injection. Use parameterized queries and bind the value."


class Server:
    def __init__(self, delay: float):
        self.delay = delay
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
                    model = json.loads(body or b"{}").get("model", "bench")
                    payload = {
                        "id": f"chatcmpl-{self.calls}",
                        "object": "chat.completion",
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
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


async def serve(delay: float, port: int, max_seconds: float) -> None:
    server = Server(delay)
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
    args = parser.parse_args()
    asyncio.run(serve(args.delay, args.port, args.max_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
