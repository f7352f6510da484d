"""A model server that answers with more than `max_reply_bytes` fails that call with a clear
message instead of filling memory; a reply under the cap is read as usual."""

from __future__ import annotations

import asyncio

import pytest

from omk.core.errors import ConfigError
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.testing import Garbage, ModelServer, Stream
from omk.testing.openai_chat import text_reply

CAP = 64 * 1024


def run(base_url: str, cap: int | None = CAP):
    block = {"base_url": base_url, **({"max_reply_bytes": cap} if cap is not None else {})}

    async def go():
        target = make_target("openai:m", settings={"openai": block})
        try:
            return await target.run(Sample("s", "hi"), "hi")
        finally:
            await target.close()

    return asyncio.run(go())


pytestmark = pytest.mark.usefixtures("no_provider_env")


def test_a_reply_over_the_cap_with_a_declared_length_fails_the_call():
    pattern = rf"reply is {CAP + 1} bytes, over the {CAP}-byte cap \(max_reply_bytes"
    with ModelServer.for_openai([Garbage(body=b"x" * (CAP + 1))]) as fake, pytest.raises(TargetError, match=pattern):
        run(fake.url)


def test_a_streamed_reply_over_the_cap_fails_the_call_without_a_declared_length():
    events = [("chunk", "y" * 20_000) for _ in range(5)]  # about 100 KB, sent without Content-Length
    with ModelServer.for_openai([Stream(events)]) as fake, pytest.raises(TargetError, match=rf"over the {CAP}-byte cap"):
        run(fake.url)


def test_a_reply_under_the_cap_is_read_as_usual():
    with ModelServer.for_openai([text_reply("fine " * 100)]) as fake:
        result = run(fake.url)
    assert result.output.startswith("fine fine")


def test_the_cap_is_checked_in_omk_yaml():
    with pytest.raises(ConfigError, match="max_reply_bytes: must be a whole number of bytes, at least 1024"):
        run("http://127.0.0.1:9", cap=10)
