"""Samples from a recorded run (`omk sample --from-run RUN_DIR`): each result of a finished run
becomes a sample that replays it offline.

A sample gets the prompt the target received (a conversation its turns' prompts, as `turns:`), one mock per distinct tool call (matched on the
tool and its whole recorded input; a call made again with the same input and a different
answer gets a `return_seq`), `mocksStrict: true`, the recorded path as a `tool_sequence`
(`in_order`), and the recorded answer as the `reference` of a `rouge_n_min` check. It is marked
`provenance: production-trace`, which is what lets a later run name any call no mock matches
as drift (omk/domain/mock_defs.py). The run is read through omk.records; its text was masked when the
run wrote it and is masked again here with the secrets this machine knows; a tool output
or answer longer than a mock file may be is cut
(by UTF-8 bytes, between characters).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omk.core.secrets import Masker
from omk.domain.mock_defs import RECORDED, is_subset
from omk.domain.tool_input import FRESH_FOLDER, call_key, recorded_match  # noqa: F401 - FRESH_FOLDER kept for callers
from omk.io.safe_files import MAX_MOCK_FILE_BYTES
from omk.loader.depth import MAX_DEPTH, nested_too_deep
from omk.records import SampleResult, ToolCall
from omk.records.document import ReportDocument, read_document
from omk.report.i18n import t

ROUGE_THRESHOLD = 0.5  # the recorded answer's words a replayed answer must recall (ROUGE-1)
CUT_MARK = "\n[omk: cut, the recorded output was longer]"
MAX_RECORDED_BYTES = MAX_MOCK_FILE_BYTES  # of a recorded tool output or answer, in UTF-8 bytes


@dataclass(slots=True)
class FromRun:
    """The samples file's text, how many samples it holds, and the results left out (and why)."""

    text: str
    count: int
    left_out: list[str] = field(default_factory=list)
    changed: list[tuple[str, str, str]] = field(default_factory=list)  # (sample id, path, when) carried but modified since the run started
    # what the recorded runs' workspaces held, carried over: folder (relative to the samples
    # file's folder, as each sample's `workspace:` names it) → path inside it → bytes
    workspaces: dict[str, dict[str, bytes]] = field(default_factory=dict)
    started: str | None = None  # when the run started (ISO)

    def write_workspaces(self, folder: Path) -> None:
        """Write the carried workspaces beside the samples file, whose folder is `folder`."""
        from omk.authoring.carry import write_carried

        for name, files in self.workspaces.items():
            write_carried(folder / name, files)


def samples_from_run(run_dir: Path, mask: Masker | None = None, lang: str = "en", out: Path | None = None) -> FromRun:
    """The samples (as omk YAML) that replay the run in `run_dir` (its folder or report.json);
    why a result was left out is said in `lang` (`en`, `zh`). With `out` (the samples file to be
    written), the files of each sample's workspace its calls named are carried over into
    `<out's name>.workspace/<sample id>/` (omk/authoring/carry.py; `write_workspaces` writes them)."""
    document = read_document(run_dir)
    mask = mask if mask is not None else Masker.for_run()
    blocks: list[str] = []
    left_out: list[str] = []
    seen: set[str] = set()
    workspaces: dict[str, dict[str, bytes]] = {}
    changed: list[tuple[str, str, str]] = []
    for result in document.results:
        why = _left_out(result, seen, lang)
        if why is not None:
            if why:
                left_out.append(f"{result.sample_id}: {why}")
            continue
        seen.add(result.sample_id)
        carried, why_not, folder, modified = _carry(result, run_dir, out, document.started_at)
        changed += [(result.sample_id, inside, when) for inside, when in modified]
        why_not = [CHANGED.format(path=inside, when=when, started=document.started_at) for inside, when in modified] + why_not
        carried = {inside: _masked(data, mask) for inside, data in carried.items()}
        try:
            sample = sample_of(result, carried, folder)
            deep = nested_too_deep(sample)
        except RecursionError:  # a hand-edited trace nested past what even the JSON writer follows
            deep = f"nested deeper than {MAX_DEPTH} levels, the most a samples file holds"
        if deep is not None:  # it would not load again, and the writers recurse: left out, said
            left_out.append(f"{result.sample_id}: {deep}")
            continue
        if carried and folder:
            workspaces[folder] = carried
        blocks.append(_block(document, run_dir, result, sample, mask, why_not))
    header = [
        "# Samples recorded from a run (omk sample --from-run): each replays one result offline,",
        "# its tool calls answered by what they returned then. Review before trusting them.",
        "samples:" if blocks else "samples: []",
    ]
    return FromRun("\n".join(header + blocks) + "\n", len(blocks), left_out, changed, workspaces, document.started_at)


def settings_left_behind(run_dir: Path, out: Path, cwd: Path) -> Path | None:
    """The omk.yaml the run's samples were read with (their target, skills, mocks' settings) when
    `omk eval OUT` would not read it (omk.yaml is found beside the samples file, else in the
    current folder); None when it would, or the run had none."""
    from omk.authoring.carry import _samples_file
    from omk.settings.config import find_config

    document = read_document(run_dir)
    source = next((found for r in document.results if (found := _samples_file(r, run_dir)) is not None), None)
    used = find_config([source], cwd) if source is not None else None
    if used is None:
        return None
    here = find_config([out], cwd)
    return None if here is not None and here.resolve() == used.resolve() else used


def _masked(data: bytes, mask: Masker) -> bytes:
    """A carried file with the secrets this machine knows masked, as the samples' text is (a file
    that is not UTF-8 text is carried as it is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return mask(text).encode("utf-8")


Carry = tuple[dict[str, bytes], list[str], str | None, list[tuple[str, str]]]
# The comment above a sample (and, through `t`, the line on stderr) for a carried file modified since the run started.
CHANGED = "workspace: {path} was modified {when}, after the run started ({started}); carried as it is now, which may not be what the agent saw"


def _carry(result: SampleResult, run_dir: Path, out: Path | None, started: str | None) -> Carry:
    """The workspace files carried over for one result, why others were not (notes), the folder
    they go to (relative to `out`'s folder: `<out's name>.workspace/<sample id>`), and the carried
    files modified since the run `started` (path, when)."""
    if out is None:
        return {}, [], None, []
    from omk.authoring.carry import carried_files, folder_name

    found = carried_files(result, run_dir, started)
    return found.files, found.why_not, f"{out.stem}.workspace/{folder_name(result.sample_id)}", found.changed


def _left_out(result: SampleResult, seen: set[str], lang: str) -> str | None:
    """Why a result gives no sample ("" for a repeat of one that did), None when it gives one."""
    if result.sample_id in seen:
        return ""
    if result.status == "error":
        return t("errored in the run ({error})", lang).format(error=result.error or t("unknown error", lang))
    if result.turns:
        unsent = next((turn for turn in result.turns if turn.status != "ok" or turn.output is None), None)
        if unsent is None:
            return None
        return t("turn {n} of the conversation has no recorded answer", lang).format(n=unsent.index + 1)
    if result.output is None:
        return t("no recorded answer", lang)
    return None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _block(document: ReportDocument, run_dir: Path, result: SampleResult, sample: dict[str, Any], mask: Masker, notes: Sequence[str] = ()) -> str:
    """One sample as YAML list item, after a comment saying where it came from (and what of its
    workspace was not carried over)."""
    import yaml

    where = f"{result.source_file}:{result.source_line}" if result.source_file else "an unnamed file"
    origin = (
        f"recorded from run {document.run_id or '?'} ({run_dir}), sample {result.sample_id} of {where}, "
        f"target {document.target.name or '?'}, started {document.started_at or '?'}"
    )
    sample = mask.value(sample)
    text = yaml.safe_dump([sample], sort_keys=False, allow_unicode=True, width=100)
    body = "\n".join(f"  {line}" if line else line for line in text.rstrip("\n").split("\n"))
    said = "".join(f"  # {_one_line(mask(note))}\n" for note in notes)
    return f"  # {_one_line(mask(origin))}\n{said}{body}"


def sample_of(result: SampleResult, carried: dict[str, bytes] | None = None, folder: str | None = None) -> dict[str, Any]:
    """The sample (as the loader reads it) that replays one recorded result. A conversation
    becomes one again (`turns:`): one sandbox of mocks for all its calls, in the order made (a
    `return_seq` runs on across turns, as the mocks' state does), and each turn its own prompt
    and checks (its own path and answer: a turn's checks see that turn's trace). `carried`: the
    workspace files carried over (omk/authoring/carry.py) into `folder`: the sample names it as
    its `workspace:` and the recorded Reads of them run for real (`run: true`)."""
    sample: dict[str, Any] = {"sample_id": result.sample_id}
    if not result.turns:
        sample["prompt"] = result.prompt
    if carried and folder:
        sample["workspace"] = folder
    sample["provenance"] = RECORDED
    if result.category:
        sample["category"] = result.category
    if result.capability:
        sample["capability"] = list(result.capability)
    calls = [c for turn in result.turns for c in turn.trace.tool_calls] if result.turns else result.trace.tool_calls
    if mocks := mocks_of(calls, _reads_to_run(calls, carried)):
        sample["mocks"] = mocks
        sample["mocksStrict"] = True
    if result.turns:
        sample["turns"] = [{"prompt": turn.prompt, **_checks(turn.trace.tool_calls, turn.output)} for turn in result.turns]
    else:
        sample.update(_checks(calls, result.output))
    return sample


def _checks(calls: Sequence[ToolCall], output: str | None) -> dict[str, Any]:
    """`{"assertions": […]}` for a recorded path and answer: the path `in_order`, the answer's
    words as a `rouge_n_min` reference; {} when there is neither."""
    assertions: list[dict[str, Any]] = []
    if calls:
        assertions.append({"type": "tool_sequence", "mode": "in_order", "steps": [c.tool for c in calls]})
    if output and output.strip():
        reference = cut_utf8(output, MAX_RECORDED_BYTES)
        assertions.append({"type": "rouge_n_min", "reference": reference, "threshold": ROUGE_THRESHOLD})
    return {"assertions": assertions} if assertions else {}


def _cut(value: Any) -> Any:
    """A recorded output as a mock returns it: text over the cap is cut, and says so."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text.encode("utf-8")) <= MAX_RECORDED_BYTES:
        return value
    return cut_utf8(text, MAX_RECORDED_BYTES)


def cut_utf8(text: str, cap: int, mark: str = CUT_MARK) -> str:
    """`text` if its UTF-8 form fits in `cap` bytes, else its start and `mark`, together at most
    `cap` bytes, cut between characters (a Chinese character is three bytes, never split)."""
    data = text.encode("utf-8")
    if len(data) <= cap:
        return text
    room = max(0, cap - len(mark.encode("utf-8")))
    return data[:room].decode("utf-8", errors="ignore") + mark


def _reads_to_run(calls: Sequence[ToolCall], carried: dict[str, bytes] | None) -> set[str]:
    if not carried:
        return set()
    from omk.authoring.carry import reads_to_run

    return reads_to_run(calls, carried)


def mocks_of(calls: Sequence[ToolCall], runs: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One mock per distinct (tool, input), in the order first called, matched on the whole
    input; a call repeated with other answers gets them in order (`return_seq`, then the last).
    A call the agent refused itself (a tool it does not offer, a check of its own) gets its mock
    too: a replay where the call reaches the mock gets the same refusal, and one where the agent
    refuses it again is not drift (omk/domain/mock_defs.py)."""
    groups: dict[str, tuple[ToolCall, list[Any]]] = {}
    for call in calls:
        key = call_key(call.tool, call.input)
        groups.setdefault(key, (call, []))[1].append(_cut(call.output if call.output is not None else ""))
    mocks = []
    for call, outputs in groups.values():
        mock: dict[str, Any] = {"tool": call.tool}
        if (match := match_of(call.input)) is not None:
            mock["match"] = match
        if len(outputs) > 1 and any(o != outputs[0] for o in outputs):
            mock["return_seq"] = outputs
        mock["return"] = outputs[-1]
        if runs and _runs(call, runs):  # a Read of a carried file: the real Read runs on it
            mock["run"] = True
        mocks.append(mock)
    return _specific_first(mocks)


def _runs(call: ToolCall, runs: set[str] | frozenset[str]) -> bool:
    from omk.authoring.carry import READ_TOOLS, inside_path

    return call.tool in READ_TOOLS and inside_path(call) in runs


def match_of(call_input: Any) -> dict[str, Any] | None:
    """How a mock recognises a recorded call: the one reading of tool input that the mock
    sandbox matches with (omk/domain/tool_input.py, `recorded_match`)."""
    return recorded_match(call_input)


def _specific_first(mocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first matching mock answers a call, and `match.input` is a subset match: a mock whose
    input holds another's (same tool) goes before it, so each recorded call meets its own."""
    ordered = list(mocks)
    moved = True
    while moved:
        moved = False
        for j, later in enumerate(ordered):
            i = next((i for i in range(j) if _catches(ordered[i], later)), None)
            if i is not None:
                ordered.insert(i, ordered.pop(j))
                moved = True
                break
    return ordered


def _catches(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    """Whether `earlier` would answer the call `later` was recorded from."""
    if earlier["tool"] != later["tool"]:
        return False
    if "match" not in earlier:
        return True
    mine, theirs = earlier["match"], later.get("match") or {}
    if any(k != "input" and theirs.get(k) != v for k, v in mine.items()):
        return False  # a path or command matched by its shape: only the same shape is caught
    return "input" not in mine or is_subset(mine["input"], theirs.get("input"))
