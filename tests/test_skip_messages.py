"""What a newcomer reads when a test skips: the exact Claude Code version to install (the one
`.ci/run` pins), and that the browser tests need Chromium, which the README says too."""

from __future__ import annotations

import re

import claude_support
import pytest
from cdp_pipe import CHROMIUM_SKIP
from claude_support import ROOT

PINNED = re.search(r"^CLAUDE_CODE_VERSION=(\S+)$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)


def test_the_claude_skip_names_the_exact_version_to_install(monkeypatch):
    assert PINNED is not None
    monkeypatch.setattr(claude_support, "find_claude", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        claude_support.require_claude()
    message = str(info.value)
    assert f"@anthropic-ai/claude-code@{PINNED.group(1)}" in message
    assert "<" not in message


def test_the_readme_names_the_pinned_version_and_chromium():
    assert PINNED is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"@anthropic-ai/claude-code@{PINNED.group(1)}" in readme
    assert "need Chromium" in readme
    assert "apt-get install -y chromium" in readme
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "chromium" in CHROMIUM_SKIP.lower()
    assert "bash .ci/run installs it" in CHROMIUM_SKIP


def test_the_codex_skip_names_the_exact_version_and_command(monkeypatch):
    import codex_support

    version = re.search(r"^CODEX_VERSION=(\S+)$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    assert version is not None
    monkeypatch.setattr(codex_support, "find_codex", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        codex_support.require_codex()
    message = str(info.value)
    assert f"npm install --no-audit --no-fund --prefix .ci/node @openai/codex@{version.group(1)}" in message
    assert "<" not in message


def _fake_cli(folder, name: str, says: str):
    folder.mkdir()
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{says}'\n", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("pin", "says"), [("CLAUDE", "{v} (Claude Code)"), ("CODEX", "codex-cli {v}")])
def test_a_cli_of_the_pinned_version_on_path_is_found_and_another_is_named(tmp_path, monkeypatch, pin, says):
    """Not in .ci/node, nor named by OMK_CLAUDE / OMK_CODEX: a CLI on PATH is used when its
    `--version` names the pinned version; one of another version is passed over, and the skip
    line says which it found."""
    import cli_pins

    chosen = getattr(cli_pins, pin)
    monkeypatch.delenv(chosen.env, raising=False)
    monkeypatch.setattr(cli_pins, "NODE_BIN", tmp_path / "no-node")
    old = _fake_cli(tmp_path / "old", chosen.name, says.format(v="0.0.1"))
    good = _fake_cli(tmp_path / "good", chosen.name, says.format(v=chosen.version))
    monkeypatch.setenv("PATH", f"{old.parent}:{good.parent}")
    assert cli_pins.find(chosen) == str(good)
    monkeypatch.setenv("PATH", str(old.parent))
    assert cli_pins.find(chosen) is None
    message = cli_pins.missing(chosen)
    assert f"{old} is 0.0.1, not {chosen.version}" in message
    assert chosen.install in message
