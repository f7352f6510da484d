"""Files a sample names (custom hook `fn`, mock `return_file`) must exist when it loads:
otherwise one loader line, FILE:LINE: samples[i] (id) FIELD: what is wrong, and exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_support import run_omk
from loader_helpers import load, one_problem, problems, write

HEAD = "samples:\n  - sample_id: a\n    prompt: p\n"
HOOK = "def check(output, ctx):\n    return True\n"


def test_missing_hook_file_is_a_load_error_with_its_line(tmp_path):
    text = HEAD + "    assertions:\n      - {type: contains, value: x}\n      - {type: custom, fn: checks/missing.py}\n"
    assert one_problem(tmp_path, text) == "s.yaml:6: samples[0] (a) assertions[1].fn: hook file not found: checks/missing.py"


def test_hook_path_is_relative_to_the_samples_folder_not_the_cwd(tmp_path, monkeypatch):
    write(tmp_path, "checks/ok.py", HOOK)  # beside the cwd, not beside the samples file
    monkeypatch.chdir(tmp_path)
    text = HEAD + "    assertions:\n      - {type: custom, fn: checks/ok.py}\n"
    assert problems(tmp_path, "evals/s.yaml", text) == [
        "evals/s.yaml:5: samples[0] (a) assertions[0].fn: hook file not found: evals/checks/ok.py"
    ]
    write(tmp_path, "evals/checks/ok.py", HOOK)
    loaded = load(tmp_path, "evals/s.yaml", text)
    assert [s.sample_id for s in loaded.samples] == ["a"]


def test_a_folder_is_not_a_hook_file(tmp_path):
    (tmp_path / "checks.py").mkdir()
    text = HEAD + "    assertions:\n      - {type: custom, fn: checks.py}\n"
    assert one_problem(tmp_path, text) == "s.yaml:5: samples[0] (a) assertions[0].fn: hook file not found: checks.py"


def test_hooks_in_sets_and_turns_are_checked_too(tmp_path):
    write(tmp_path, "ok.js", "export default () => true\n")
    text = """
    samples:
      - sample_id: conv
        turns:
          - prompt: 你好
            assertions:
              - {type: custom, fn: turn_check.py}
          - prompt: again
        assertions:
          - type: assert-set
            children:
              - {type: custom, fn: ok.js}
              - {type: custom, fn: nested/gone.mjs}
    """
    assert problems(tmp_path, "s.yaml", text) == [
        "s.yaml:6: samples[0] (conv) turns[0].assertions[0].fn: hook file not found: turn_check.py",
        "s.yaml:12: samples[0] (conv) assertions[0].children[1].fn: hook file not found: nested/gone.mjs",
    ]


def test_a_hook_with_the_wrong_suffix_keeps_its_own_message_only(tmp_path):
    text = HEAD + "    assertions:\n      - {type: custom, fn: check.txt}\n"
    assert one_problem(tmp_path, text) == "s.yaml:5: samples[0] (a) assertions[0].fn: custom hook 'check.txt' must be a .py, .js or .mjs file"


def test_missing_files_are_reported_with_the_samples_other_problems(tmp_path):
    text = HEAD + "    difficulty: extreme\n    assertions:\n      - {type: custom, fn: nope.py}\n"
    assert problems(tmp_path, "s.yaml", text) == [
        's.yaml:4: samples[0] (a) difficulty: must be one of "easy", "medium" or "hard" (got "extreme")',
        "s.yaml:6: samples[0] (a) assertions[0].fn: hook file not found: nope.py",
    ]


def test_missing_return_file_is_a_load_error_with_its_line(tmp_path):
    write(tmp_path, "fixtures/order.json", '{"status": "shipped"}')
    text = HEAD + (
        "    mocks:\n"
        "      - {tool: lookup, return_file: fixtures/order.json}\n"
        "      - tool: Read\n"
        "        return_seq: [first]\n"
        "        return_file: fixtures/page.txt\n"
    )
    assert one_problem(tmp_path, text) == "s.yaml:8: samples[0] (a) mocks[1].return_file: file not found: fixtures/page.txt"
    write(tmp_path, "fixtures/page.txt", "page")
    assert [s.sample_id for s in load(tmp_path, "s.yaml", text).samples] == ["a"]


def test_missing_files_in_json_samples_have_their_lines(tmp_path):
    text = json.dumps(
        [{"sample_id": "j", "prompt": "p", "mocks": [{"tool": "t", "return_file": "gone.txt"}], "assertions": [{"type": "custom", "fn": "gone.py"}]}],
        indent=1,
    )
    found = problems(tmp_path, "s.json", text)
    lines = text.splitlines()
    at_mock = next(n for n, line in enumerate(lines, 1) if "gone.txt" in line)
    at_hook = next(n for n, line in enumerate(lines, 1) if "gone.py" in line)
    assert found == [
        f"s.json:{at_mock}: samples[0] (j) mocks[0].return_file: file not found: gone.txt",
        f"s.json:{at_hook}: samples[0] (j) assertions[0].fn: hook file not found: gone.py",
    ]


def test_omk_eval_stops_at_load_with_exit_2(tmp_path):
    samples = write(tmp_path, "s.yaml", HEAD + "    assertions:\n      - {type: custom, fn: checks/missing.py}\n")
    responses = write(tmp_path, "r.jsonl", '{"sample_id": "a", "output": "hi"}\n')
    env = {k: v for k, v in os.environ.items() if k not in ("OMK_TARGET", "OMK_JUDGE")}
    proc = run_omk(
        "eval", str(samples), "--target", f"replay:{responses}", "--out", str(tmp_path / "run"),
        cwd=tmp_path, base={**env, "NO_COLOR": "1"}, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    missing = Path(tmp_path / "checks" / "missing.py").resolve()
    assert f"s.yaml:5: samples[0] (a) assertions[0].fn: hook file not found: {missing}" in proc.stderr
    assert not (tmp_path / "run" / "report.json").exists()
