"""The judge: rubric, dimensions and judge-scored assertions over one or more judge models.

Every judge call goes through the same path: the cache (`.omk/cache.sqlite`, replies that parsed),
a concurrency gate, the model-call layer's retries for transport failures (429, 5xx, timeouts), then
parsing; an unparseable reply is asked again once, and a second bad reply makes the item an error
with the raw replies kept. A judge item never turns into a silent 0:

* with `--judge-repeat N` an item's score is the mean of the calls that worked; it errors only
  when every call failed (the failures are counted);
* in an ensemble the item's score is the mean of the judges that produced a score; it errors only
  when none did (each judge's own error is kept in its entry);
* a rubric or dimension that errors gives no judge score, and the run marks the sample `error`
  a judge-scored assertion that errors fails as an error, and marks the sample too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from statistics import fmean, stdev
from typing import TYPE_CHECKING, Any

from omk.core.secrets import Masker
from omk.core.tasks import gather_all
from omk.domain.target_identity import CacheIdentity
from omk.domain.target_result import TargetResult
from omk.io.textsafe import scrub
from omk.judge import comparison, likert, prompts
from omk.judge.agreement import run_agreement, sample_agreement
from omk.judge.clients import JudgeClient, Reply
from omk.judge.parse import ReplyError, parse_score_reply, parse_statements, parse_verdicts
from omk.judge.relevancy import (
    DEFAULT_UNCERTAINTY_WEIGHT,
    mastra_score,
    ratio_to_five,
    relevancy_ratio,
    relevancy_reason,
)
from omk.llm.errors import CallError
from omk.llm.retry import CallFailure, RetryPolicy, call_with_retry
from omk.records import JudgeBlock, Tokens, Trace
from omk.samples.model import AssertionSpec, Outcome, Sample
from omk.scoring.layers import round2

if TYPE_CHECKING:
    from omk.assertions.context import CheckContext
    from omk.store.cache import ResponseCache

# 2: a judge's identity is a target's (omk.domain.target_identity): its endpoint, the proxy and routing
# variables, the files its command names; replies stored under a key without them are not taken.
CACHE_KEY_VERSION = 2
DEFAULT_THRESHOLD = 3
RAW_CHARS = 2000  # raw replies kept in the report are cut to this length


@dataclass(slots=True)
class Scored:
    """One judge's verdict on one item, from one call (or one relevancy pipeline)."""

    score: float | None = None
    reason: str = ""
    reasoning: str | None = None
    error: str | None = None
    raw: list[str] = field(default_factory=list)
    cost: float | None = None
    detail: dict[str, Any] | None = None  # e.g. answer_relevancy's statements and verdicts


Attempt = Callable[[JudgeClient, int], Awaitable[Scored]]


def _add(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b


def _cut(text: str) -> str:
    return text if len(text) <= RAW_CHARS else text[:RAW_CHARS] + "…"


def combine(rubric: float | None, dimensions: list[float] | None) -> float | None:
    """Rubric alone, dimension mean alone, or the mean of the two."""
    parts = []
    if rubric is not None:
        parts.append(rubric)
    if dimensions:
        parts.append(fmean(dimensions))
    return round2(fmean(parts)) if parts else None


class JudgePanel:
    def __init__(
        self,
        clients: list[JudgeClient],
        *,
        lang: str = "en",
        debias_length: bool = True,
        repeat: int = 1,
        concurrency: int = 4,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        mask: Masker | None = None,
    ):
        if not clients:
            raise ValueError("a judge needs at least one client")
        self.clients = clients
        self.lang = "zh" if lang.lower().startswith("zh") else "en"
        self.debias_length = debias_length
        self.repeat = max(1, int(repeat))
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.mask = mask or Masker()  # the run's secrets, out of every reply and error kept
        self.cache: ResponseCache | None = None
        self._owns_cache = False
        self.calls = 0
        self._spent: float | None = None
        self._gate: asyncio.Semaphore | None = None
        self._assertion_failures: dict[int, str] = {}
        self._identities: dict[int, Any] = {}  # each client's identity, worked out on its first call (it may read files)

    # --- the report -------------------------------------------------------------------------

    @property
    def ensemble(self) -> bool:
        return len(self.clients) > 1

    def spent_usd(self) -> float | None:
        """Judge cost of this run (cached replies are free); None when no call reported a cost."""
        return round(self._spent, 6) if self._spent is not None else None

    def describe(self, results: list[Any] | None = None) -> dict[str, Any]:
        block: dict[str, Any] = {
            "models": [c.spec for c in self.clients],
            "judges": [c.describe() for c in self.clients],
            "prompt_version": prompts.rubric_version(self.lang, self.debias_length),
            "prompt_hash": prompts.rubric_hash(self.lang, self.debias_length),
            "lang": self.lang,
            "debias_length": self.debias_length,
            "repeat": self.repeat,
            "templates": {
                **prompts.all_hashes(self.lang, self.debias_length),
                **likert.hashes(self.lang),
                **comparison.hashes(self.lang),
            },
        }
        if results is not None and self.ensemble:
            block["agreement"] = self.run_agreement(results)
        return block

    def run_agreement(self, results: list[Any]) -> dict[str, Any] | None:
        """Pearson and mean |difference| across the samples every judge scored; `results` are
        `SampleResult`s or their digests (omk/scoring/digest.py), which keep each member's score."""
        from omk.scoring.digest import digests

        specs = [c.spec for c in self.clients]
        rows = [[by_spec.get(s) for s in specs] for d in digests(results) for by_spec in d.judge_scores]
        return run_agreement(specs, rows)

    def use_cache(self, shared: ResponseCache | None = None) -> None:
        """Keep parsed replies in the run's response cache, or open `.omk/cache.sqlite` when the
        target has none (a replay target): re-grading recorded outputs is then free."""
        if shared is None:
            from omk.store.cache import open_cache

            self.cache, self._owns_cache = open_cache(), True
        else:
            self.cache, self._owns_cache = shared, False

    def failure(self, ctx: CheckContext, judge_block: JudgeBlock | None) -> str | None:
        """Why the judge failed on this sample (rubric, dimension or assertion), else None."""
        assertion_failure = self._assertion_failures.pop(id(ctx), None)
        if judge_block is not None and judge_block.error:
            return f"judge: {judge_block.error}"
        return f"judge: {assertion_failure}" if assertion_failure else None

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        if self.cache is not None and self._owns_cache:
            self.cache.close()
        self.cache = None

    # --- one call ---------------------------------------------------------------------------

    def _key(self, client: JudgeClient, system: str, prompt: str, n: int) -> str:
        judge = self._identities.get(id(client))
        if judge is None:
            identity = client.identity()
            judge = self._identities[id(client)] = identity.material() if isinstance(identity, CacheIdentity) else identity
        material = {"v": CACHE_KEY_VERSION, "judge": judge, "system": system, "prompt": prompt, "n": n}
        text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return "judge:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    async def _ask(self, client: JudgeClient, system: str, prompt: str, n: int, parse: Callable[[str], Any]) -> tuple[Any, Scored]:
        """(parsed value or None, bookkeeping). Cache, gate, transport retries, one parse retry."""
        book = Scored()
        key = self._key(client, system, prompt, n)
        if self.cache is not None and (hit := await self.cache.fetch(key)) is not None:
            try:
                return parse(self.mask(hit.output)), book
            except ReplyError:
                pass
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)
        async def call(attempt: int) -> Reply:
            """One call; the reply (and an error's message) masked in full before it is kept or cut."""
            try:
                reply = await client.complete(system, prompt, self.timeout)
            except CallError as exc:
                raise CallError(scrub(self.mask(str(exc))), retryable=exc.retryable, retry_after=exc.retry_after) from None
            return Reply(scrub(self.mask(reply.text)), reply.cost_usd, reply.tokens)

        why = ""
        for _ in range(2):  # the second pass is the one retry of an unparseable reply
            try:
                async with self._gate:
                    reply, attempts = await call_with_retry(call, self.timeout + 5, self.retry)
            except CallFailure as exc:
                self.calls += exc.attempts
                book.error = f"{client.spec}: {exc}" if not str(exc).startswith(client.spec) else str(exc)
                return None, book
            self.calls += attempts
            book.cost = _add(book.cost, reply.cost_usd)
            self._spent = _add(self._spent, reply.cost_usd)
            try:
                value = parse(reply.text)
            except ReplyError as exc:
                why = str(exc)
                book.raw.append(_cut(reply.text))
                continue
            if self.cache is not None:
                self.cache.store(key, TargetResult(output=reply.text, trace=Trace(cost_usd=reply.cost_usd, tokens=Tokens.of(reply.tokens))), "judge")
            return value, book
        book.error = f"{client.spec}: unparseable reply (asked twice): {why}"
        return None, book

    # --- items: one judge's repeats, then the ensemble --------------------------------------

    async def _repeats(self, client: JudgeClient, attempt: Attempt) -> dict[str, Any]:
        runs = await gather_all(*(attempt(client, n) for n in range(self.repeat)))
        ok = [r for r in runs if r.score is not None]
        entry: dict[str, Any] = {
            "judge": client.spec,
            "score": round2(fmean(r.score for r in ok)) if ok else None,
            "reason": next((r.reason for r in ok if r.reason), ""),
            "reasoning": next((r.reasoning for r in ok if r.reasoning), None),
            "cost_usd": None,
        }
        for r in runs:
            entry["cost_usd"] = _add(entry["cost_usd"], r.cost)
        if ok and ok[0].detail is not None:
            entry["detail"] = ok[0].detail
        if self.repeat > 1:
            entry["samples"] = [r.score for r in runs]
            entry["stddev"] = round(stdev([r.score for r in ok]), 3) if len(ok) >= 2 else 0.0
            entry["failures"] = len(runs) - len(ok)
        errors = [r.error for r in runs if r.error]
        if errors:
            entry["errors"] = errors
        raw = [text for r in runs for text in r.raw]
        if raw:
            entry["raw_replies"] = raw
        if not ok:
            entry["error"] = errors[0] if errors else "no score"
        return entry

    async def _item(self, attempt: Attempt) -> dict[str, Any]:
        entries = await gather_all(*(self._repeats(c, attempt) for c in self.clients))
        if not self.ensemble:
            return dict(entries[0])
        good = [e for e in entries if e["score"] is not None]
        item: dict[str, Any] = {
            "score": round2(fmean(e["score"] for e in good)) if good else None,
            "reason": "",
            "reasoning": next((e["reasoning"] for e in good if e["reasoning"]), None),
            "cost_usd": None,
            "judges": entries,
        }
        for e in entries:
            item["cost_usd"] = _add(item["cost_usd"], e["cost_usd"])
        if good:
            scores = ", ".join(f"{e['judge']} {e['score']:g}" for e in good)
            first = next((e for e in good if e["reason"]), None)
            item["reason"] = f"consensus of {len(good)}/{len(entries)} judges ({scores})" + (f": {first['reason']}" if first else "")
            item["agreement"] = sample_agreement([e["score"] for e in good])
        else:
            item["error"] = "; ".join(e["error"] for e in entries)
        return item

    def _score_attempt(self, system: str, prompt: str) -> Attempt:
        async def attempt(client: JudgeClient, n: int) -> Scored:
            reply, book = await self._ask(client, system, prompt, n, parse_score_reply)
            if reply is not None:
                book.score, book.reason, book.reasoning = reply.score, reply.reason, reply.reasoning
            return book

        return attempt

    # --- rubric and dimensions ----------------------------------------------------------------

    async def grade(
        self, sample: Sample, output: str, trace: Trace, history: list[tuple[str, str]] | None = None
    ) -> dict[str, Any] | None:
        """Rubric and dimensions. `history`: a conversation's earlier turns as (prompt, output),
        shown to the judge before this turn's prompt."""
        if not sample.has_judge_work:
            return None
        summary = prompts.trace_summary(trace, self.lang)
        system = prompts.RUBRIC_SYSTEM[self.lang]
        task = prompts.with_history(sample.prompt, history, self.lang)

        def attempt_for(criterion: str) -> Attempt:
            # the judge sees sample.prompt (after URL inlining), never the context-wrapped prompt
            text = prompts.rubric_prompt(task, criterion, output, summary, self.lang, self.debias_length)
            return self._score_attempt(system, text)

        dimensions = sample.dimensions or {}
        names = list(dimensions)
        jobs = [self._item(attempt_for(sample.rubric))] if sample.rubric else []
        jobs += [self._item(attempt_for(prompts.dimension_criterion(n, dimensions[n]))) for n in names]
        items = await gather_all(*jobs)
        rubric = items[0] if sample.rubric else None
        dims = dict(zip(names, items[1:] if sample.rubric else items, strict=True)) if names else None
        block: dict[str, Any] = {"score": None, "rubric": rubric, "dimensions": dims, "cost_usd": None, "error": None}
        for item in items:
            block["cost_usd"] = _add(block["cost_usd"], item["cost_usd"])
        errors = ([f"rubric: {rubric['error']}"] if rubric and rubric.get("error") else []) + [
            f"dimension {n}: {d['error']}" for n, d in (dims or {}).items() if d.get("error")
        ]
        if errors:
            block["error"] = "; ".join(errors)
        else:
            block["score"] = combine(rubric["score"] if rubric else None, [d["score"] for d in (dims or {}).values()])
        if self.ensemble:
            block["judges"] = self._per_judge(rubric, dims)
            scored = [j["score"] for j in block["judges"] if j["score"] is not None]
            block["agreement"] = sample_agreement(scored) if len(scored) >= 2 else None
        return block

    def _per_judge(self, rubric: dict[str, Any] | None, dims: dict[str, dict[str, Any]] | None) -> list[dict[str, Any]]:
        """Each judge's own sample score (rubric and dimensions combined), for agreement."""
        out = []
        for i, client in enumerate(self.clients):
            r = rubric["judges"][i]["score"] if rubric else None
            d = [item["judges"][i]["score"] for item in (dims or {}).values()]
            missing = (rubric is not None and r is None) or any(v is None for v in d)
            out.append({"judge": client.spec, "score": None if missing else combine(r, d)})
        return out

    # --- judge-scored assertions --------------------------------------------------------------

    async def check_assertion(self, spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        kind = spec.type
        if kind == "answer_relevancy":
            return await self._relevancy(spec, ctx)
        if kind == "compare_content":
            return await self._compare_content(spec, ctx)
        # one 1-5 call: M365 Relevance / Coherence / Groundedness / Similarity (omk/judge/likert.py)
        # or omk's own semantic_similarity / faithfulness / context_recall (omk/judge/prompts.py)
        if kind in likert.KINDS:
            filled, render = likert.slots(spec, ctx), likert.prompt
        else:
            filled, render = _assertion_slots(spec, ctx), prompts.assertion_prompt
        if isinstance(filled, Outcome):
            return filled
        system, prompt = render(kind, filled, self.lang)
        item = await self._item(self._score_attempt(system, prompt))
        return self._outcome(spec, ctx, item, metric=None)

    async def _compare_content(self, spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        """Big Sky compareContent: empty texts decide alone; else similar (5) or different (1)."""
        from omk.assertions.bigsky import empty_texts

        if (decided := empty_texts(spec, ctx)) is not None:
            return decided
        expected, actual = spec.get("reference") or "", ctx.output or ""
        system = comparison.COMPARE_SYSTEM[self.lang]
        prompt = comparison.compare_prompt(expected, actual, self.lang)

        async def attempt(client: JudgeClient, n: int) -> Scored:
            similar, book = await self._ask(client, system, prompt, n, comparison.parse_similar)
            if similar is not None:
                book.score, book.reason = (5.0, "similar") if similar else (1.0, "different")
            return book

        item = await self._item(attempt)
        if item.get("error"):
            return self._outcome(spec, ctx, item, metric=None)
        similar = item["score"] >= 3  # an ensemble decides by majority
        return Outcome(similar, metric=float(similar), message="similar" if similar else "different", score=item["score"])

    async def prefer(self, messages: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
        """Big Sky's pairwise preference (omk/judge/comparison.py): each judge votes 1 (A better),
        2 (B better) or 0 (tie); the most votes win and an even split is a tie. Returns
        `{"preference": 0|1|2|None, "reason", "votes": [...], "error"}`."""
        system = comparison.PAIRWISE_SYSTEM[self.lang]
        prompt = comparison.pairwise_prompt(messages, a, b, self.lang)
        replies = await gather_all(*(self._ask(c, system, prompt, 0, comparison.parse_preference) for c in self.clients))
        votes, errors = [], []
        for client, (value, book) in zip(self.clients, replies, strict=True):
            if value is None:
                errors.append(book.error or f"{client.spec}: no reply")
            else:
                votes.append({"judge": client.spec, "preference": value[0], "reason": value[1]})
        if not votes:
            return {"preference": None, "reason": "", "votes": [], "error": "; ".join(errors)}
        counts = {p: sum(1 for v in votes if v["preference"] == p) for p in (1, 2, 0)}
        top = max(counts.values())
        winners = [p for p, n in counts.items() if n == top]
        preference = winners[0] if len(winners) == 1 else 0
        reason = next((v["reason"] for v in votes if v["preference"] == preference and v["reason"]), "")
        return {"preference": preference, "reason": reason, "votes": votes, "error": "; ".join(errors) or None}

    def _outcome(self, spec: AssertionSpec, ctx: CheckContext, item: dict[str, Any], metric: float | None) -> Outcome:
        if item.get("error"):
            raw = [t for e in item.get("judges", [item]) for t in e.get("raw_replies", [])]
            message = f"{spec.type} judge error: {item['error']}" + (f"; last reply: {raw[-1][:300]!r}" if raw else "")
            self._assertion_failures.setdefault(id(ctx), message)
            return Outcome(False, message=message, error=True)
        score = item["score"]
        threshold = spec.get("threshold", DEFAULT_THRESHOLD)
        reason = item.get("reason") or ""
        return Outcome(
            score >= threshold,
            metric=score if metric is None else metric,
            message=f"{score:g}/5 (threshold {threshold:g})" + (f": {reason}" if reason else ""),
            score=score,
        )

    async def _relevancy(self, spec: AssertionSpec, ctx: CheckContext) -> Outcome:
        weight = spec.get("uncertainty_weight", DEFAULT_UNCERTAINTY_WEIGHT)
        question = prompts.with_history(ctx.sample.prompt, getattr(ctx, "history", None), self.lang)
        system = prompts.RELEVANCY_SYSTEM[self.lang]
        ratios: list[float] = []

        async def attempt(client: JudgeClient, n: int) -> Scored:
            statements, book = await self._ask(client, system, prompts.relevancy_extract_prompt(ctx.output, self.lang), n, parse_statements)
            if statements is None:
                return book
            verdicts: list[dict[str, str]] = []
            if statements:
                verdicts, second = await self._ask(
                    client,
                    system,
                    prompts.relevancy_verdict_prompt(question, statements, self.lang),
                    n,
                    lambda text: parse_verdicts(text, len(statements)),
                )
                book.cost = _add(book.cost, second.cost)
                book.raw += second.raw
                if verdicts is None:
                    book.error = second.error
                    return book
            ratio = relevancy_ratio([v["result"] for v in verdicts], weight)
            ratios.append(ratio)
            book.score = ratio_to_five(ratio)
            book.reason = relevancy_reason(statements, verdicts, book.score)
            book.detail = {"statements": statements, "verdicts": verdicts, "ratio": round(ratio, 4)}
            return book

        item = await self._item(attempt)
        metric = None
        if spec.get("scale") is not None and ratios and item.get("score") is not None:
            metric = mastra_score(fmean(ratios), float(spec.get("scale")))  # Mastra's own 0..scale number
        return self._outcome(spec, ctx, item, metric)


def _assertion_slots(spec: AssertionSpec, ctx: CheckContext) -> tuple[str, ...] | Outcome:
    """What fills an omk judge-scored template, or an error Outcome when an input is missing (no call made)."""
    kind = spec.type
    if kind == "semantic_similarity":
        reference = spec.get("reference")
        if not isinstance(reference, str) or not reference.strip():
            return Outcome(False, message="semantic_similarity: needs a non-empty `reference` (no judge call made)", error=True)
        return (reference, ctx.output)
    if kind in ("faithfulness", "context_recall"):
        source = spec.get("reference") or ctx.sample.context
        if not isinstance(source, str) or not source.strip():
            # the check cannot run: it fails under `not` too, but the judge did nothing wrong
            return Outcome(False, message=f"{kind}: needs sample.context or the assertion's `reference` (no judge call made)", error=True)
        return (source, ctx.output)
    return Outcome(False, message=f"{kind}: not a judge-scored type", error=True)
