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
    assert f"@anthropic-ai/claude-code@{PINNED.group(1)}" in message and "<" not in message


def test_the_readme_names_the_pinned_version_and_chromium():
    assert PINNED is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"@anthropic-ai/claude-code@{PINNED.group(1)}" in readme
    assert "need Chromium" in readme and "apt-get install -y chromium" in readme
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8") and "chromium" in CHROMIUM_SKIP.lower()
    assert "bash .ci/run installs it" in CHROMIUM_SKIP
