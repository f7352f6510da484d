"""Experiment reports with the pairwise judge's block, built by omk's own analysis and pairwise
code from the report factory's results: for the report tests and the golden report corpus."""

from __future__ import annotations

from report_factory import XSS, make_report, sample_of, sample_results

from omk.engine.pairwise import entry as _entry
from omk.engine.pairwise import position as _position
from omk.engine.pairwise import summary as _summary
from omk.engine.variant_records import variant_run
from omk.stats import AnalysisSettings, analyze
from omk.stats.winrate import WinRate

LONG = "B 漏掉了 MD5 的问题，" + "reason " * 80 + "END-OF-REASON"
TARGETS = [{"kind": "replay", "spec": "replay:a.jsonl"}, {"kind": "cmd", "spec": "cmd:python agent_v1.py"}]


def orders(a: str, b: str, votes: list | None = None) -> dict:
    first = {"winner": a, "reason": f"A first: {a}"}
    if votes:
        first["votes"] = votes
    return {"a_first": first, "b_first": {"winner": b, "reason": f"B first: {b}"}}


def pair_block(keys: tuple[str, ...] = ("pairwise",), votes: bool = False, treatment: str = "cmd-python-agent_v1.py") -> dict:
    """One treatment-vs-control comparison built by omk.engine.pairwise's own entry/summary code."""
    zh, tool, errored = (sample_of(r) for r in sample_results())
    verdicts = []
    for key in keys:
        verdicts += [
            _entry(zh, key, status="ok", preference=1, reason="A 识别了 SQL 注入 | 并给出参数化查询", orders=orders("a", "a")),
            _entry(tool, key, status="ok", preference=2, reason=LONG + " " + XSS, orders=orders("b", "b")),
            _entry(errored, key, status="error", error="A (replay-a.jsonl) failed on this sample: HTTP 503 <html>"),
        ]
    verdicts.append(_entry(zh, "tie-" + keys[-1], status="ok", preference=0, reason="both fine", orders=orders("tie", "tie")))
    if votes:
        verdicts[0]["orders"]["a_first"]["votes"] = [
            {"judge": "openai:gpt-4o", "preference": 1, "reason": "A is precise"},
            {"judge": "anthropic:claude", "preference": 2, "reason": "B is " + XSS},
        ]
    rates = []
    for key in dict.fromkeys(v["key"] for v in verdicts):
        ok = [v for v in verdicts if v["key"] == key and v["status"] == "ok"]
        rates.append(WinRate(key, *(sum(1 for v in ok if v["winner"] == w) for w in ("b", "a", "tie"))).to_dict())
    return {
        "control": "replay-a.jsonl",
        "treatment": treatment,
        "targets": TARGETS,
        "reports": ["variants/replay-a.jsonl", f"variants/{treatment}"],
        "summary": _summary(verdicts),
        "position": _position(verdicts),
        "win_rate": rates,
        "verdicts": verdicts,
    }


def with_pairwise(keys: tuple[str, ...] = ("pairwise",), votes: bool = False, pairs: int = 1) -> dict:
    """The factory report as an experiment's report (a real experiment block from the factory's
    results) with the pairwise judge's block."""
    report = make_report()
    results = sample_results()
    runs = [variant_run("replay-a.jsonl", "control", results), variant_run("cmd-python-agent_v1.py", "treatment", results)]
    block = analyze(runs, AnalysisSettings(seed=0)).to_dict()
    block["pairwise"] = {
        "judge": ["openai:gpt-4o"],
        "orders": "both",
        "rule": "a side wins only when the judge prefers it in both orders (A first, B first); otherwise a tie",
        "repeat": 0,
        "judge_cost_usd": 0.0042,
        "pairs": [pair_block(keys, votes, treatment=f"cmd-python-agent_v{n + 1}.py") for n in range(pairs)],
    }
    report["experiment"] = block
    return report
