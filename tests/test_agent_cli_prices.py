"""The agent CLIs priced: `--dry-run` of `claude:` and `codex:` targets prices their models from
omk's dated table (omk/llm/pricing.py), omk.yaml's `claude.price` / `codex.price` overrides it,
and a model with no price names the setting of its own target kind, never openai.price."""

from __future__ import annotations

import os
from pathlib import Path

from claude_support import require_claude
from cli_support import run_omk
from codex_support import require_codex

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = "samples:\n  - sample_id: a\n    prompt: say hi\n    assertions: [{type: contains, value: hi}]\n"


def dry_run(tmp_path: Path, target: str, omk_yaml: str = "") -> str:
    (tmp_path / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    if omk_yaml:
        (tmp_path / "omk.yaml").write_text(omk_yaml, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_TARGET", "OMK_JUDGE"))}
    env.update(OMK_CLAUDE=require_claude(), OMK_CODEX=require_codex(), ANTHROPIC_API_KEY="sk-test", OPENAI_API_KEY="sk-test",
               PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="200")
    done = run_omk(
        "eval", "s.yaml", "--target", target, "--no-judge", "--dry-run",
        cwd=tmp_path, base=env, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_agent_clis_models_are_priced_from_the_dated_table(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "claude:sonnet")
    assert "no known price" not in out
    assert "$0.0060" in out  # 400 output tokens at $15 per 1M, 2 input at $3
    out = dry_run(tmp_path, "codex:gpt-5-codex")
    assert "no known price" not in out
    assert "$0.0040" in out


def test_omk_yaml_prices_each_cli_kind_and_the_hint_names_its_setting(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "codex:gpt-5-codex", "codex:\n  price: {input: 0, output: 100}\n")
    assert "$0.0400" in out
    unknown = dry_run(tmp_path, "claude:some-new-model", "")
    assert "set claude.price in omk.yaml" in unknown
    assert "openai.price" not in unknown


def test_the_price_table_says_when_it_was_taken() -> None:
    from omk.llm.pricing import PRICES_CHECKED

    assert len(PRICES_CHECKED) == 10
    assert PRICES_CHECKED[4] == "-"
