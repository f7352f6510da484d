"""The agent CLIs priced: `--dry-run` of `claude:` and `codex:` targets prices their models from
omk's dated table (omk/llm/pricing.py), omk.yaml's `claude.price` / `codex.price` overrides it,
and a model with no price names the setting of its own target kind, never openai.price. A target
that names no model is priced as the model the pinned CLI asks for by default, and a test runs
each pinned CLI to read which model that is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claude_support import require_claude
from cli_support import run_omk
from codex_support import require_codex

from omk.testing import ModelServer, ScriptTurn

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
    assert "$0.0040" in out  # 400 output tokens at $10 per 1M, 2 input at $2 (sonnet: claude-sonnet-5-5)
    out = dry_run(tmp_path, "codex:gpt-5-codex")
    assert "no known price" not in out
    assert "$0.0040" in out


def test_a_cli_target_without_a_model_is_priced_as_the_cli_s_default(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "claude:")
    assert "target claude: (claude-opus-5-5): 1 call(s), ~2 prompt + ~400 output tokens, $0.0080" in out  # $4 / $20
    assert "no known price" not in out
    out = dry_run(tmp_path, "codex:")
    assert "target codex: (gpt-6.2-sol): 1 call(s), ~2 prompt + ~400 output tokens, $0.0040" in out  # $2 / $10
    assert "no known price" not in out


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_the_pinned_cli_s_default_model_is_priced(tmp_path: Path, kind: str) -> None:
    """Each pinned CLI, run with no model named, asks the scripted server for its default model:
    that model is omk's CLI_DEFAULT_MODEL and has a price. A new pin whose CLI asks for another
    model fails here until the table has it."""
    from omk.llm.pricing import CLI_DEFAULT_MODEL, price_of

    (tmp_path / "s.yaml").write_text(SAMPLES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMK_", "ANTHROPIC_", "OPENAI_", "CLAUDE_", "CODEX_"))}
    with ModelServer([ScriptTurn(text="hi", usage={"input_tokens": 10, "output_tokens": 5})]) as fake:
        env.update(OMK_CLAUDE=require_claude(), OMK_CODEX=require_codex(), ANTHROPIC_API_KEY="sk-test", OPENAI_API_KEY="sk-test",
                   ANTHROPIC_BASE_URL=fake.url, OPENAI_BASE_URL=fake.openai_url, HOME=str(tmp_path), PYTHONPATH=str(ROOT))
        done = run_omk("eval", "s.yaml", "--target", f"{kind}:", "--no-judge", "--out", "run", cwd=tmp_path, base=env, drop=(), columns=None, timeout=240)
        asked = {str((r.json or {}).get("model")) for r in fake.requests if r.method == "POST" and (r.json or {}).get("model")}
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert asked == {CLI_DEFAULT_MODEL[kind]}, asked
    assert price_of(CLI_DEFAULT_MODEL[kind]) is not None
    trace = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))["results"][0]["trace"]
    assert trace["cost_usd"] is not None
    assert trace["cost_usd"] > 0  # the cost column has a figure too


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
