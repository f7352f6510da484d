"""Builders for the judge tests: judges pointed at the loopback fakes, samples, scripted replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from omk.judge.clients import make_client
from omk.judge.judge import JudgePanel
from omk.llm.retry import RetryPolicy
from omk.samples.model import Sample
from omk.testing.openai_chat import text_reply


async def _no_sleep(_: float) -> None:
    return None


def make_judge(specs: list[str], *, retries: int = 1, timeout: float = 10.0, **kw: Any) -> JudgePanel:
    policy = RetryPolicy(retries=retries, base=0.0, sleep=_no_sleep)
    return JudgePanel([make_client(s, {}) for s in specs], retry=policy, timeout=timeout, **kw)


def sample(**fields: Any) -> Sample:
    fields.setdefault("sample_id", "s1")
    fields.setdefault("prompt", "How do I fix this SQL query?")
    return Sample(**fields, raw={"sample_id": fields["sample_id"]})


def score_json(score: Any, reason: str = "ok", reasoning: str = "checked") -> str:
    return json.dumps({"reasoning": reasoning, "score": score, "reason": reason})


def by_model(replies: dict[str, Any]):
    """A responder: each model answers with its own reply (a text or a full step)."""

    def respond(req):
        reply = replies[req.json["model"]]
        return text_reply(reply) if isinstance(reply, str) else reply

    return respond


def user_prompt(req) -> str:
    return next(m["content"] for m in req.json["messages"] if m["role"] == "user")


def run(coro):
    return asyncio.run(coro)


async def graded(judge: JudgePanel, s: Sample, output: str = "use parameters", trace=None):
    from omk.records import Trace

    try:
        return await judge.grade(s, output, trace or Trace())
    finally:
        await judge.close()
