"""A small price table for well-known models, so the trace can carry a cost.

Prices are USD per 1M tokens (input, output), list prices as published by the providers (checked
2025); they drift, so omk.yaml may set `openai.price` / `anthropic.price` to override. A model
that is not in the table gets cost null, never a guess.
"""

from __future__ import annotations

import re

# model name (without a date suffix) -> (input, output) USD per 1M tokens
PRICES: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    # Anthropic
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4-1": (15.00, 75.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-opus": (15.00, 75.00),
    "claude-3-haiku": (0.25, 1.25),
}

# What may follow a known name and still be the same model: a date or `latest`.
_VERSION_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|latest)$")


def price_of(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens, or None when the model is unknown.

    `openai/gpt-4o` (router prefix), `gpt-4o-2024-08-06` and `claude-3-5-sonnet-latest` resolve
    to their base model; `gpt-4o-audio-preview` does not.
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name in PRICES:
        return PRICES[name]
    base = _VERSION_SUFFIX.sub("", name)
    return PRICES.get(base)


def cost_usd(
    price: tuple[float, float] | None, input_tokens: int | None, output_tokens: int | None
) -> float | None:
    """Cost of a call, or None when the price or the token counts are unknown."""
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 8)
