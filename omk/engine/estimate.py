"""What a run would cost, before it runs: `omk eval --dry-run`.

The estimate is built from a prepared evaluation (samples loaded and checked, target and judge
built) and makes no call of any kind: no target or judge call, no preflight check, no URL fetched.

- Calls: every (sample, repeat) still to run makes one target call per turn; every one of them
  with judge work (a rubric or dimensions, here or on a turn) makes one call per judge and per
  judge repeat for each judged item, plus one per judge-scored assertion.
- Prompt tokens are counted with omk's own tokenizer (the one ROUGE and BLEU use: words, and each
  CJK character), over the system prompt, the history, the context and the prompts. A model's own
  tokenizer usually counts somewhat more; the figure is an estimate, and says so.
- Output tokens come from the response cache when it holds this sample's answer (the tokens the
  target reported then), else a stated default per call.
- URLs in prompts are not fetched, so their content is not counted: the estimate names how many
  there are.
- Cost is the model's price (omk.yaml `openai.price`, `anthropic.price`, `claude.price` or
  `codex.price`, as the target kind is, else omk's dated price table, omk/llm/pricing.py)
  times the tokens; a model with no known price is named and left out of the total.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omk.llm.pricing import CLI_DEFAULT_MODEL, cost_usd, price_of
from omk.samples.model import Sample

if TYPE_CHECKING:
    from omk.engine.evaluation import Evaluation

DEFAULT_OUTPUT_TOKENS = 400  # per target call, when the cache has no answer to go by
JUDGE_OUTPUT_TOKENS = 200  # per judge call: a short reasoning and a score
JUDGE_PROMPT_TOKENS = 600  # the judge's instructions around the output it reads


@dataclass(slots=True)
class ModelLine:
    """The calls, tokens and cost one model would take (`role`: target or judge)."""

    role: str
    name: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    price: tuple[float, float] | None = None
    setting: str = "openai.price / anthropic.price"  # the omk.yaml setting that would price it

    @property
    def cost_usd(self) -> float | None:
        return cost_usd(self.price, self.input_tokens, self.output_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role, "name": self.name, "calls": self.calls, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "cost_usd": self.cost_usd,
        }


@dataclass(slots=True)
class Estimate:
    """The plan of one run (or of an experiment's variants together) and what it would cost."""

    jobs: int = 0  # (sample, repeat) pairs still to run, over every variant
    variants: int = 1
    lines: list[ModelLine] = field(default_factory=list)
    urls: int = 0  # URLs in prompts, not fetched: their content is not in the token counts
    outputs_from_cache: int = 0  # target calls whose output tokens came from the cache
    default_output_tokens: int = DEFAULT_OUTPUT_TOKENS

    @property
    def cost_usd(self) -> float:
        return round(sum(c for line in self.lines if (c := line.cost_usd) is not None), 6)

    @property
    def unpriced_settings(self) -> list[str]:
        """The omk.yaml settings that would price the unpriced models, by their target kinds."""
        return sorted({line.setting for line in self.lines if line.price is None and line.calls and line.setting})

    @property
    def unpriced(self) -> list[str]:
        """The unpriced models a setting would price."""
        return sorted({line.name for line in self.lines if line.price is None and line.calls and line.setting})

    @property
    def self_priced(self) -> list[str]:
        """The unpriced targets no setting prices: what they report is their cost."""
        return sorted({line.name for line in self.lines if line.price is None and line.calls and not line.setting})

    def line(self, role: str, name: str, price: tuple[float, float] | None) -> ModelLine:
        for existing in self.lines:
            if (existing.role, existing.name) == (role, name):
                return existing
        self.lines.append(ModelLine(role, name, price=price))
        return self.lines[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs, "variants": self.variants, "models": [line.to_dict() for line in self.lines],
            "cost_usd": self.cost_usd, "unpriced": self.unpriced, "urls_not_fetched": self.urls,
            "outputs_from_cache": self.outputs_from_cache, "default_output_tokens": self.default_output_tokens,
        }


def count_tokens(text: str | None) -> int:
    from omk.assertions.tokenize import tokens

    return len(tokens(text)) if text else 0


def price_key(spec: str | None) -> str:
    """The omk.yaml setting that prices a target of this spec's kind; "" for a kind no setting
    prices (a `cmd:` target reports its own cost, a replay costs nothing)."""
    from omk.llm.pricing import PRICE_SETTING

    kind = str(spec or "").partition(":")[0]
    return PRICE_SETTING.get(kind, "")


def model_price(client_or_target: Any) -> tuple[str, tuple[float, float] | None]:
    """(the name to show, the price) of a target or judge client: its model's, omk.yaml's price first.
    An agent CLI target that names no model (`claude:`) shows the model its price is of, the one
    the pinned CLI asks for by default: `claude: (claude-opus-5-5)`."""
    client = getattr(client_or_target, "client", None)
    model = getattr(client, "model", None) or getattr(client_or_target, "model", None)
    spec = getattr(client_or_target, "spec", None)
    name = str(model or spec or type(client_or_target).__name__)
    if not model and isinstance(spec, str) and (default := CLI_DEFAULT_MODEL.get(spec.partition(":")[0])) and spec.endswith(":"):
        name = f"{spec} ({default})"
    price = getattr(client, "price", None) or getattr(client_or_target, "price", None) or (price_of(str(model)) if model else None)
    return name, price


def estimate(evaluations: list[Evaluation]) -> Estimate:
    """The estimate over one evaluation, or an experiment's variants (each an evaluation)."""
    from omk.inline.urls import find_urls

    out = Estimate(variants=len(evaluations))
    for ev in evaluations:
        cache = _open_cache(ev)
        seen: set[str] = set()
        try:
            for sample, repeat in ev.todo:
                out.jobs += 1
                seen.update(u for p in _prompts(sample) for u in find_urls(p))
                _add_target(out, ev, sample, repeat, cache)
                _add_judge(out, ev, sample)
        finally:
            if cache is not None:
                cache.close()
        out.urls = max(out.urls, len(seen))  # the variants share their samples
    return out


def _prompts(sample: Sample) -> list[str]:
    return [t.prompt for t in sample.turns] if sample.turns else [sample.prompt]


def _add_target(out: Estimate, ev: Evaluation, sample: Sample, repeat: int, cache: Any) -> None:
    name, price = model_price(ev.target)
    line = out.line("target", name, price)
    line.setting = price_key(getattr(ev.target, "spec", None))
    prompts = _prompts(sample)
    system = getattr(getattr(ev.target, "system", None), "text", None)
    fixed = count_tokens(system) + count_tokens(sample.context) + sum(count_tokens(str(m.get("content", ""))) for m in sample.history)
    cached = _cached_outputs(ev, sample, prompts, repeat, cache)
    if cached is not None:
        out.outputs_from_cache += len(prompts)
    sent = fixed
    for i, prompt in enumerate(prompts):  # each turn resends the conversation so far
        sent += count_tokens(prompt)
        reply = cached[i] if cached is not None else DEFAULT_OUTPUT_TOKENS
        line.calls += 1
        line.input_tokens += sent
        line.output_tokens += reply
        sent += reply


def _add_judge(out: Estimate, ev: Evaluation, sample: Sample) -> None:
    judge = ev.judge
    if judge is None:
        return
    items = int(sample.has_judge_work) + sum(bool(t.rubric or t.dimensions) for t in sample.turns)
    items += sum(1 for specs in sample.assertion_lists() for a in specs if _judged(a.type))
    if not items:
        return
    reads = JUDGE_PROMPT_TOKENS + count_tokens(sample.prompt) + count_tokens(sample.rubric) + DEFAULT_OUTPUT_TOKENS
    for client in getattr(judge, "clients", []):
        name, price = model_price(client)
        line = out.line("judge", name, price)
        calls = items * max(1, getattr(judge, "repeat", 1))
        line.calls += calls
        line.input_tokens += calls * reads
        line.output_tokens += calls * JUDGE_OUTPUT_TOKENS


def _judged(type_name: str) -> bool:
    from omk.assertions.registry import get

    kind = get(type_name)
    return kind is not None and kind.kind == "judge"


def _open_cache(ev: Evaluation) -> Any:
    """The response cache, read only, when the run would use it (None: --no-cache, none there)."""
    from omk.store.cache import DEFAULT_PATH, open_cache

    path = ev.cwd / DEFAULT_PATH
    if ev.options.no_cache or ev.target.cache_identity() is None or not path.is_file():
        return None
    return open_cache(path)


def _cached_outputs(ev: Evaluation, sample: Sample, prompts: list[str], repeat: int, cache: Any) -> list[int] | None:
    """The output tokens of each turn as the cache recorded them, or None when it has no answer."""
    from omk.store.cache import cache_key, conversation_key

    identity = ev.target.cache_identity()
    if cache is None or identity is None:
        return None
    if sample.turns:
        hits = cache.get_turns(conversation_key(identity, sample, prompts, repeat))
    else:
        hit = cache.get(cache_key(identity, sample, prompts[0], repeat))
        hits = [hit] if hit is not None else None
    if not hits or len(hits) != len(prompts):
        return None
    counts = [h.trace.tokens.output for h in hits]
    return [c if c is not None else count_tokens(h.output) for c, h in zip(counts, hits, strict=True)]
