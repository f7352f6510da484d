"""The records omk writes and reads back: results, turns, traces, tool calls, scores
(`omk.records.result`), judge blocks (`omk.records.judging`), report.json and its header's
target and judge settings (`omk.records.document`) and its experiment block
(`omk.records.experiment_block`). Each is a frozen `msgspec.Struct` with one `to_json`, read back
by msgspec's typed decoding (omk.records.wire words a wrong field as omk always has): as itself
where the JSON is the record's fields (`JsonRecord`), through a record of the written layout where
keys are worked out, renamed, grouped or written only when set (each module says which, and why).
Only the experiment block is still read field by field, through the checked reader of
omk/records/fields.py (omk.records.experiment_block says why). No other module reads result or
report JSON by hand.
The judge block's records load on first use (a run without a judge never needs them)."""

from typing import TYPE_CHECKING

from omk.core.lazy import forwarder
from omk.records.result import (
    CALL_OUTCOMES,
    AssertionResult,
    CallOutcome,
    FileChange,
    InlinedUrl,
    MockStats,
    SampleResult,
    Scores,
    Tokens,
    ToolCall,
    Trace,
    TurnResult,
    WorkspaceChanges,
)

if TYPE_CHECKING:
    from omk.records.judging import JudgeBlock, JudgeItem, SampleAgreement

__all__ = [
    "CALL_OUTCOMES",
    "AssertionResult",
    "CallOutcome",
    "FileChange",
    "InlinedUrl",
    "JudgeBlock",
    "JudgeItem",
    "SampleAgreement",
    "MockStats",
    "SampleResult",
    "Scores",
    "Tokens",
    "ToolCall",
    "Trace",
    "TurnResult",
    "WorkspaceChanges",
]

if not TYPE_CHECKING:
    __getattr__ = forwarder(__name__, dict.fromkeys(("JudgeBlock", "JudgeItem", "SampleAgreement"), "omk.records.judging"))
