"""The records omk writes and reads back: results, turns, traces, tool calls, scores
(`omk.records.result`), judge blocks (`omk.records.judging`), report.json and its header's
target and judge settings (`omk.records.document`) and its experiment block
(`omk.records.experiment_block`). Each has one `to_json` and one checked `from_json`; no other module
reads result or report JSON by hand."""

from omk.records.judging import JudgeBlock, JudgeItem, SampleAgreement
from omk.records.result import (
    AssertionResult,
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

__all__ = [
    "AssertionResult",
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
