"""A small price table for well-known models, so the trace can carry a cost.

Prices are USD per 1M tokens (input, output), list prices as published by the providers on the
date in `PRICES_CHECKED`; they drift, so omk.yaml may set `openai.price` / `anthropic.price` (API
targets) and `claude.price` / `codex.price` (the agent CLIs) to override. The agent CLIs' model
names are in the table too (`sonnet`, `gpt-5-codex`…), and so is the model each pinned CLI sends
when the target names none (`CLI_DEFAULT_MODEL`): a dry run, a budget and the cost columns price
their calls when the CLI reports no cost of its own. A model that is not in the table gets cost
null, never a guess (a model priced in tiers, such as Claude Haiku 5.5, is left out).
"""

from __future__ import annotations

import re

# The day the table below was last checked against the providers' pages. The rows of the models
# released since the first table (2025-11-24) come from: Anthropic's model pages
# (platform.claude.com/docs/.../models/<model>/overview: Opus 5.5 $4/$20, Sonnet 5.5 and Sonnet 5
# $2/$10, Opus 5 $5/$25, Fable 5.1 $10/$50; the same pages list Opus 4.5 and Haiku 4.5 unchanged),
# and OpenAI's model pages of GPT-6.2 Sol and Astra (released 2026-11-17; $2/$10 and $8/$40, as
# mirrored on 2026-11-19) and GPT-6 Sol, Luna and Astra (2026-09-22 pricing). Long-context,
# cached, batch and priority rates are not modelled: the figure is the standard short-context rate.
PRICES_CHECKED = "2026-11-29"

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
    "gpt-5-codex": (1.25, 10.00),
    "gpt-5.1": (1.25, 10.00),
    "gpt-5.1-codex": (1.25, 10.00),
    "gpt-5.1-codex-mini": (0.25, 2.00),
    "codex-mini-latest": (1.50, 6.00),
    "gpt-6-sol": (2.00, 10.00),
    "gpt-6-luna": (0.10, 0.50),
    "gpt-6-astra": (10.00, 50.00),
    "gpt-6.1-sol": (2.00, 10.00),
    "gpt-6.2-sol": (2.00, 10.00),  # the pinned Codex CLI's default model
    "gpt-6.2-astra": (8.00, 40.00),
    # Anthropic
    "claude-fable-5-1": (10.00, 50.00),
    "claude-opus-5-5": (4.00, 20.00),  # the pinned Claude Code CLI's default model
    "claude-opus-5": (5.00, 25.00),
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-sonnet-5": (2.00, 10.00),
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
    # the Claude Code CLI's model aliases: the model each names in the pinned CLI on PRICES_CHECKED
    # (opus: claude-opus-5-5, sonnet: claude-sonnet-5-5; haiku names claude-haiku-5-5, priced in
    # tiers, so it has no row). A later model an alias names may cost otherwise: claude.price sets it.
    "opus": (4.00, 20.00),
    "sonnet": (2.00, 10.00),
}

# The model each agent CLI asks for when the target names none (`claude:`, `codex:`), as the CLIs
# pinned in .ci/node send it (read from their requests to `omk serve-model --record`). Another
# version of a CLI may ask for another model: name it in the target (`claude:sonnet`) or set
# claude.price / codex.price.
CLI_DEFAULT_MODEL = {"claude": "claude-opus-5-5", "codex": "gpt-6.2-sol"}
PINNED_CLI = {"claude": "Claude Code 2.1.331", "codex": "Codex 0.171.0"}

# The omk.yaml setting that overrides the price of each target kind's model.
PRICE_SETTING = {"openai": "openai.price", "anthropic": "anthropic.price", "claude": "claude.price", "codex": "codex.price"}

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


def cli_price(kind: str, model: str | None) -> tuple[float, float] | None:
    """The table's price of an agent CLI's model: the one named, else the pinned CLI's default."""
    return price_of(model or CLI_DEFAULT_MODEL[kind])


def cost_usd(
    price: tuple[float, float] | None, input_tokens: int | None, output_tokens: int | None
) -> float | None:
    """Cost of a call, or None when the price or the token counts are unknown."""
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 8)


def price_setting(block: dict, name: str) -> tuple[float, float] | None:
    """omk.yaml's `NAME.price: {input, output}` (USD per 1M tokens) of a target kind's block;
    None when not set. A ConfigError names the setting when its shape is wrong."""
    from omk.core.errors import ConfigError

    price = block.get("price")
    if price is None:
        return None
    if not (isinstance(price, dict) and all(isinstance(price.get(k), int | float) for k in ("input", "output"))):
        raise ConfigError(f"omk.yaml {name}.price: must be {{input: USD per 1M tokens, output: USD per 1M tokens}}")
    return (float(price["input"]), float(price["output"]))
