"""Experiment reports with the pairwise judge's block, built by omk's own analysis and pairwise
code from the report factory's results: for the report tests and the golden report corpus."""

from __future__ import annotations

from report_factory import XSS, make_report, sample_of, sample_results

from omk.engine.pairwise import Arm, make_pair
from omk.engine.pairwise import entry as _entry
from omk.engine.variant_records import variant_run
from omk.records.experiment_block import ExperimentBlock, PairwiseOrder, Vote
from omk.stats import AnalysisSettings, analyze

LONG = "B 漏掉了 MD5 的问题，" + "reason " * 80 + "END-OF-REASON"
TARGETS = [{"kind": "replay", "spec": "replay:a.jsonl"}, {"kind": "cmd", "spec": "cmd:python agent_v1.py"}]


def orders(a: str, b: str, votes: tuple[Vote, ...] = ()) -> tuple[PairwiseOrder, PairwiseOrder]:
    return PairwiseOrder(a, f"A first: {a}", votes), PairwiseOrder(b, f"B first: {b}")


def pair_block(keys: tuple[str, ...] = ("pairwise",), votes: bool = False, treatment: str = "cmd-python-agent_v1.py") -> dict:
    """One treatment-vs-control comparison built by omk.engine.pairwise's own entry/summary code."""
    zh, tool, errored = (sample_of(r) for r in sample_results())
    verdicts = []
    votes = (Vote("openai:gpt-4o", 1, "A is precise"), Vote("anthropic:claude", 2, "B is " + XSS)) if votes else ()
    for n, key in enumerate(keys):
        verdicts += [
            _entry(zh, key, status="ok", preference=1, reason="A 识别了 SQL 注入 | 并给出参数化查询", orders=orders("a", "a", () if n else votes)),
            _entry(tool, key, status="ok", preference=2, reason=LONG + " " + XSS, orders=orders("b", "b")),
            _entry(errored, key, status="error", error="A (replay-a.jsonl) failed on this sample: HTTP 503 <html>"),
        ]
    verdicts.append(_entry(zh, "tie-" + keys[-1], status="ok", preference=0, reason="both fine", orders=orders("tie", "tie")))
    control = Arm("replay-a.jsonl", TARGETS[0], "variants/replay-a.jsonl", [])
    return make_pair(control, Arm(treatment, TARGETS[1], f"variants/{treatment}", []), verdicts, 0.95, ("openai:gpt-4o",)).to_json()


def with_pairwise(keys: tuple[str, ...] = ("pairwise",), votes: bool = False, pairs: int = 1) -> dict:
    """The factory report as an experiment's report (a real experiment block from the factory's
    results) with the pairwise judge's block."""
    report = make_report()
    results = sample_results()
    runs = [variant_run("replay-a.jsonl", "control", results), variant_run("cmd-python-agent_v1.py", "treatment", results)]
    block = ExperimentBlock.of(analyze(runs, AnalysisSettings(seed=0))).to_json()
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
