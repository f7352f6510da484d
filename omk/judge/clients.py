"""Judge backends: one `complete(system, prompt)` call each, failures classified for retry.

`openai:MODEL` and `anthropic:MODEL` go through the model-call layer the API targets use
(omk/llm: provider settings from omk.yaml and the environment, the request and reply formats,
error classification, secret redaction, the price table). A
`@URL` suffix (`openai:llama3@http://127.0.0.1:8080/v1`) points the judge at its own server, so
a local judge can grade a hosted target. `cmd:COMMAND` runs a program per call: it reads one JSON
line `{"type": "judge_request", "system", "prompt", "model"}` on stdin and prints the reply text,
or a JSON object with `output` (and optionally `cost_usd`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
from dataclasses import dataclass, field
from typing import Any, Protocol

from omk.errors import ConfigError
from omk.llm.anthropic_messages import AnthropicMessages
from omk.llm.client import ModelClient
from omk.llm.errors import CallError
from omk.llm.http import (
    ProviderSettings,
    is_local_url,
    provider_settings,
    public_url,
)
from omk.llm.openai_chat import OpenAIChat
from omk.secrets import Masker

JUDGE_PARAMS = {"temperature": 0}
JUDGE_DEFAULTS: dict[str, dict[str, Any]] = {"anthropic": {"max_tokens": 2048}}  # the API requires one
STDERR_CHARS = 300
CLIENTS: dict[str, type[ModelClient]] = {"openai": OpenAIChat, "anthropic": AnthropicMessages}


@dataclass(slots=True)
class Reply:
    text: str
    cost_usd: float | None = None
    tokens: dict[str, int | None] = field(default_factory=lambda: {"input": None, "output": None})


class JudgeClient(Protocol):
    spec: str

    def identity(self) -> dict[str, Any]:
        """What decides the reply besides the prompt (for the cache); never a secret."""
        ...

    def describe(self) -> dict[str, Any]: ...

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply: ...

    async def close(self) -> None: ...


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _provider(name: str, arg: str, spec: str, settings: dict[str, Any], default_base: str) -> tuple[str, ProviderSettings]:
    """(model, provider settings); `MODEL@URL` overrides the base URL for the judge alone."""
    model, sep, url = arg.partition("@")
    model = model.strip()
    if not model:
        raise ConfigError(f"judge {spec!r}: expected {name}:MODEL")
    if not sep:
        try:
            return model, provider_settings(name, settings, default_base, f"judge {spec}")
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("target 'judge ", "judge '")) from None
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"judge {spec!r}: the part after @ must be an http(s) base URL")
    block = (settings or {}).get(name) or {}
    key_env = named if isinstance(block, dict) and isinstance(named := block.get("api_key_env"), str) else f"{name.upper()}_API_KEY"
    provider = ProviderSettings(
        name=name, base_url=url.rstrip("/"), api_key=os.environ.get(key_env) or None, api_key_env=key_env, params={}
    )
    if provider.api_key is None and not is_local_url(url):
        raise ConfigError(f"judge {spec!r}: no API key: set {key_env} (a local base URL needs none)")
    return model, provider


class ModelJudge:
    """`openai:MODEL` or `anthropic:MODEL`: one request per call, through the model-call layer."""

    def __init__(self, spec: str, client: ModelClient):
        self.spec = spec
        self.client = client
        self.kind = client.kind
        self.model = client.model
        self.provider = client.provider

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "base_url": public_url(self.provider.base_url), "params": self.provider.params}

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": self.kind, "model": self.model, "base_url": public_url(self.provider.base_url)}

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply:
        params = {k: v for k, v in self.provider.params.items() if k != "tools"}  # the judge offers no tools
        params = {**JUDGE_DEFAULTS.get(self.kind, {}), **JUDGE_PARAMS, **params}
        payload = self.client.request(system, self.client.history([{"role": "user", "content": prompt}]), [], params)
        turn = self.client.parse(await self.client.send(payload, timeout=timeout))
        return Reply(turn.text, self.client.cost(turn), {"input": turn.input_tokens, "output": turn.output_tokens})

    async def close(self) -> None:
        await self.client.close()


class CommandJudge:
    """A program per judge call; stdin one JSON line, stdout the reply."""

    kind = "cmd"

    def __init__(self, spec: str, command: str, mask: Masker | None = None, max_bytes: int | None = None):
        from omk.targets.cmd import DEFAULT_MAX_OUTPUT_BYTES

        self.spec = spec
        self.mask = mask or Masker()
        self.max_bytes = max_bytes or DEFAULT_MAX_OUTPUT_BYTES
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"judge {spec!r}: cannot split the command line: {exc}") from None
        if not self.argv:
            raise ConfigError(f"judge {spec!r}: expected cmd:COMMAND")
        if shutil.which(self.argv[0]) is None:
            raise ConfigError(f"judge {spec!r}: command not found: {self.argv[0]}")
        self.model = command

    def identity(self) -> dict[str, Any]:
        return {"kind": "cmd", "argv": self.argv}

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "kind": "cmd", "command": self.argv}

    async def complete(self, system: str, prompt: str, timeout: float) -> Reply:
        from omk.targets.cmd import stop_program

        request = json.dumps({"type": "judge_request", "system": system, "prompt": prompt, "model": None}, ensure_ascii=False)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: a timeout or Ctrl-C stops its children too
            )
        except OSError as exc:
            raise CallError(f"{self.spec}: cannot start: {exc}") from None
        try:
            async with asyncio.timeout(timeout):
                out, err = await _talk(proc, (request + "\n").encode("utf-8"), self.max_bytes)
        except TimeoutError:
            raise CallError(f"{self.spec}: timed out after {timeout:g}s", retryable=True) from None
        finally:
            await stop_program(proc)  # reaped, pipes drained (2 s at most), even when cancelled
        if proc.returncode != 0:
            tail = self.mask.clip(self.mask.cut_edges(err.decode("utf-8", "replace").strip()), STDERR_CHARS, keep_end=True)
            raise CallError(f"{self.spec}: exited with code {proc.returncode}" + (f": {tail}" if tail else ""))
        return _command_reply(out.decode("utf-8", "replace"))

    async def close(self) -> None:
        return None


async def _talk(proc: asyncio.subprocess.Process, request: bytes, max_bytes: int) -> tuple[bytes, bytes]:
    """Send the request, read stdout (at most `max_bytes`: a TargetError past it) and the tail of
    stderr until both close; memory stays bounded whatever the program writes."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(request)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await proc.stdin.drain()
    proc.stdin.close()

    async def tail(stream: asyncio.StreamReader) -> bytes:
        kept = b""
        while chunk := await stream.read(65536):
            kept = (kept + chunk)[-4 * STDERR_CHARS :]
        return kept

    errors = asyncio.ensure_future(tail(proc.stderr))
    out = bytearray()
    try:
        while chunk := await proc.stdout.read(65536):
            out += chunk
            if len(out) > max_bytes:
                raise CallError(f"judge command printed more than {max_bytes} bytes; raise max_output_bytes in omk.yaml if that is expected")
        err = await errors
    finally:
        errors.cancel()
    await proc.wait()
    return bytes(out), err


def _command_reply(stdout: str) -> Reply:
    """Plain text, one JSON object with `output`, or JSON lines ending in `{"type": "response"}`."""
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.strip().startswith("{")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            cost = data.get("cost_usd", data.get("costUSD"))
            tokens = found if isinstance(found := data.get("tokens"), dict) else {}
            return Reply(
                data["output"],
                float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
                {"input": _int(tokens.get("input")), "output": _int(tokens.get("output"))},
            )
    return Reply(text)


def make_client(spec: str, settings: dict[str, Any] | None = None) -> JudgeClient:
    kind, sep, arg = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or not arg.strip():
        raise ConfigError(f"judge {spec!r}: expected KIND:ARG — openai:MODEL, anthropic:MODEL or cmd:COMMAND")
    if kind in ("openai", "anthropic"):
        client_class = CLIENTS[kind]
        model, provider = _provider(kind, arg, spec, settings or {}, client_class.default_base_url)
        # the label reports carry: a `user:password@` in a judge URL never reaches them
        label = f"{kind}:{model}@{public_url(provider.base_url)}" if "@" in arg else spec
        return ModelJudge(label, client_class(model, provider, label=label))
    if kind == "cmd":
        from omk.targets.cmd import max_output_bytes

        return CommandJudge(spec, arg.strip(), Masker.for_run(settings), max_output_bytes(settings))
    raise ConfigError(f"judge {spec!r}: unknown kind {kind!r}; expected openai:MODEL, anthropic:MODEL or cmd:COMMAND")
