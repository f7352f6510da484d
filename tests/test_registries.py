"""The target, judge and report-format registries: adding one is a module plus one line; what is
not asked for is not imported; unknown names get the messages they always got."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omk.core.errors import ConfigError
from omk.core.lazy import LazyRegistry, load_ref
from omk.judge.clients import KINDS as JUDGE_KINDS
from omk.judge.clients import Reply, make_client, register_judge
from omk.report import FORMATS, WRITERS, register_format, write_formats
from omk.targets import KINDS, make_target, register_target
from omk.targets.base import TargetResult


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """A module outside omk, importable as `omk_test_plugin`."""
    (tmp_path / "omk_test_plugin.py").write_text(
        "from pathlib import Path\n"
        "from omk.targets.base import TargetResult\n"
        "class Echo:\n"
        "    def __init__(self, text, spec):\n"
        "        self.text, self.spec = text, spec\n"
        "    @classmethod\n"
        "    def from_spec(cls, arg, spec, *, base_dir, settings):\n"
        "        return cls(arg, spec)\n"
        "    def describe(self):\n"
        "        return {'kind': 'echo', 'spec': self.spec}\n"
        "    async def run(self, sample, prompt, session=None):\n"
        "        return TargetResult(output=self.text + ': ' + prompt)\n"
        "    def cache_identity(self):\n"
        "        return None\n"
        "    async def close(self):\n"
        "        return None\n"
        "class Reader(Echo):\n"
        "    @classmethod\n"
        "    def from_spec(cls, arg, spec, *, base_dir, settings):\n"
        "        seen = dict(settings), settings.get('system'), settings['openai']['params'], 'skill' in settings\n"
        "        return cls(repr(seen), spec)\n"
        "class Parrot:\n"
        "    def __init__(self, arg, spec, *, settings):\n"
        "        self.spec, self.word = spec, arg\n"
        "    def identity(self):\n"
        "        return {'kind': 'parrot', 'word': self.word}\n"
        "    def describe(self):\n"
        "        return {'spec': self.spec, 'kind': 'parrot'}\n"
        "    async def complete(self, system, prompt, timeout):\n"
        "        from omk.judge.clients import Reply\n"
        "        return Reply(self.word + ': ' + prompt, 0.5)\n"
        "    async def close(self):\n"
        "        return None\n"
        "def write_count(out_dir, report, lang='en'):\n"
        "    path = Path(out_dir) / 'count.txt'\n"
        "    path.write_text(' '.join([str(len(report.results)), *(r.sample_id for r in report.results), lang]))\n"
        "    return path\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    saved_kinds, saved_judges, saved_formats = dict(KINDS.entries), dict(JUDGE_KINDS.entries), dict(FORMATS)
    yield "omk_test_plugin"
    KINDS.entries.clear()
    KINDS.entries.update(saved_kinds)
    JUDGE_KINDS.entries.clear()
    JUDGE_KINDS.entries.update(saved_judges)
    FORMATS.clear()
    FORMATS.update(saved_formats)
    sys.modules.pop("omk_test_plugin", None)


def test_the_built_in_entries_resolve_inside_their_own_package():
    """A lazy reference is an import the import-graph test cannot see: it stays in its package."""
    for kind, ref in KINDS.entries.items():
        assert ref.startswith("omk.targets.") and callable(load_ref(ref)), kind
    for kind, ref in JUDGE_KINDS.entries.items():
        assert ref.startswith("omk.judge.") and callable(load_ref(ref)), kind
    for name, ref in FORMATS.items():
        assert ref.startswith("omk.report.") and callable(load_ref(ref)), name
    assert KINDS.names() == ("openai", "anthropic", "cmd", "replay", "claude", "codex")
    assert JUDGE_KINDS.names() == ("openai", "anthropic", "cmd")
    assert WRITERS.names() == ("json", "junit", "md", "html")


def test_unknown_kinds_and_formats_keep_their_messages():
    with pytest.raises(ConfigError) as bad:
        make_target("nonsense")
    assert str(bad.value) == "target 'nonsense': expected KIND:ARG with KIND one of openai, anthropic, cmd, replay, claude, codex"
    with pytest.raises(ConfigError) as unknown:
        make_target("foo:bar")
    assert str(unknown.value) == "target 'foo:bar': unknown kind 'foo'; expected one of openai, anthropic, cmd, replay, claude, codex"
    with pytest.raises(ConfigError) as judge:
        make_client("gemini:pro")
    assert str(judge.value) == "judge 'gemini:pro': unknown kind 'gemini'; expected one of openai, anthropic, cmd"
    with pytest.raises(ConfigError) as no_arg:
        make_client("cmd: ")
    assert str(no_arg.value) == "judge 'cmd: ': expected KIND:ARG with KIND one of openai, anthropic, cmd"
    with pytest.raises(ConfigError) as fmt:
        write_formats(Path("."), {}, ["pdf", "md"])
    assert str(fmt.value) == "--format: unknown format(s) pdf; available: json, junit, md, html"


def test_a_registered_target_kind_is_built_and_run(plugin_module):
    import asyncio

    from omk.samples.model import Sample

    register_target("echo", f"{plugin_module}:Echo.from_spec")
    assert plugin_module not in sys.modules  # registering imports nothing
    target = make_target("echo:said")
    assert asyncio.run(target.run(Sample("s", "hi"), "hi")) == TargetResult(output="said: hi")
    with pytest.raises(ConfigError, match="expected one of openai, anthropic, cmd, replay, claude, codex, echo"):
        make_target("nope:x")


def test_a_registered_target_kind_reads_the_run_settings_as_a_mapping(plugin_module, tmp_path):
    """A kind written against a dict of settings keeps working: the typed TargetSettings the
    built-in kinds read (`settings.system`) is also a read-only mapping of the settings given."""
    from omk.settings.config import load_settings

    register_target("reader", f"{plugin_module}:Reader.from_spec")
    (tmp_path / "omk.yaml").write_text("system: be brief\nopenai:\n  params: {temperature: 0}\n", encoding="utf-8")
    blocks = load_settings([], tmp_path, {}).blocks()
    assert (blocks.system, blocks.openai, blocks.skill) == ("be brief", {"params": {"temperature": 0}}, None)  # typed
    import asyncio

    from omk.samples.model import Sample

    target = make_target("reader:x", settings=blocks)
    seen = ({"system": "be brief", "openai": {"params": {"temperature": 0}}}, "be brief", {"temperature": 0}, False)
    assert asyncio.run(target.run(Sample("s", "hi"), "hi")).output == f"{seen!r}: hi"


def test_a_registered_judge_kind_is_built_and_asked(plugin_module):
    import asyncio

    register_judge("parrot", f"{plugin_module}:Parrot")
    assert plugin_module not in sys.modules  # registering imports nothing
    client = make_client("Parrot:polly", {})  # the kind is not case-sensitive, as for the built-in ones
    assert client.describe() == {"spec": "Parrot:polly", "kind": "parrot"}
    assert asyncio.run(client.complete("system", "grade this", 5.0)) == Reply("polly: grade this", 0.5)
    with pytest.raises(ConfigError, match="expected one of openai, anthropic, cmd, parrot"):
        make_client("nope:x")


def test_a_registered_report_format_is_written(plugin_module, tmp_path):
    register_format("count", f"{plugin_module}:write_count")
    results = [{"sample_id": "a", "status": "ok"}, {"sample_id": "b", "status": "error"}]  # older reports lack the rest
    written = write_formats(tmp_path, {"format": "omk-report/1", "summary": {}, "results": results}, ["count"], "zh")
    assert [p.name for p in written] == ["report.json", "count.txt"]
    assert (tmp_path / "count.txt").read_text() == "2 a b zh"


def test_a_bad_reference_says_what_is_wrong():
    registry: LazyRegistry[object] = LazyRegistry({"x": "omk.targets.replay"})
    with pytest.raises(ValueError, match="expected 'module:attr'"):
        registry.load("x")
    with pytest.raises(AttributeError):
        load_ref("omk.targets.replay:NoSuchThing")


def test_only_the_kind_and_formats_asked_for_are_imported(tmp_path):
    (tmp_path / "r.jsonl").write_text(json.dumps({"sample_id": "a", "output": "x"}) + "\n", encoding="utf-8")
    code = (
        "import json, sys\n"
        "from omk.targets import make_target\n"
        "from omk.report import write_formats\n"
        f"make_target('replay:{tmp_path / 'r.jsonl'}')\n"
        "write_formats(__import__('pathlib').Path(sys.argv[1]), {'format': 'omk-report/1', 'results': [], 'summary': {}}, ['md'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('omk.targets.', 'omk.report.', 'omk.llm')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout))
    assert {"omk.targets.replay", "omk.report.json_report", "omk.report.markdown"} <= loaded
    assert not loaded & {"omk.targets.openai", "omk.targets.anthropic", "omk.targets.cmd", "omk.report.html_report", "omk.report.junit"}
    assert "omk.llm.http" not in loaded


def test_only_the_judge_kind_asked_for_is_imported():
    code = (
        "import json, sys\n"
        "from omk.judge.clients import make_client\n"
        "make_client(sys.argv[1], {})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('omk.judge.', 'omk.llm', 'omk.targets')))))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}

    def loaded(spec: str) -> set[str]:
        out = subprocess.run([sys.executable, "-c", code, spec], capture_output=True, text=True, env=env, check=False)
        assert out.returncode == 0, out.stderr
        return set(json.loads(out.stdout))

    command = loaded(f"cmd:{sys.executable} -c pass")
    assert "omk.judge.command_judge" in command
    assert not command & {"omk.judge.model_judge", "omk.llm.openai_chat", "omk.llm.anthropic_messages", "omk.targets"}
    model = loaded("openai:m")
    assert {"omk.judge.model_judge", "omk.llm.openai_chat"} <= model
    assert not model & {"omk.judge.command_judge", "omk.llm.anthropic_messages", "omk.targets"}
