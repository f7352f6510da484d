"""The `experiment` block of report.json (omk/engine/analysis.py) as the Markdown, HTML and JUnit
reports show it: what the three formats share — reading the block, the variants side by side,
each comparison's measures, each variant's per-sample outcomes — as plain text, unescaped.

Every function reads the report.json shape (dicts), so a finished experiment can be re-rendered
with `omk report`. A report without the block yields nothing here. Sample ids and variant names
are untrusted text: each format escapes what it prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omk.report.i18n import t

LAYERS = ("fact", "behavior", "judge")

# Labels only the experiment sections use, in Chinese for `--lang zh` (the rest come from i18n).
ZH = {
    "Experiment": "实验",
    "experiment": "实验",
    "variant": "变体",
    "role": "角色",
    "control": "对照",
    "treatment": "实验组",
    "layer gate": "分层门禁",
    "cost / sample": "每条成本",
    "latency / sample": "每条延迟",
    "tokens in / out": "输入 / 输出 token",
    "measure": "指标",
    "change": "变化",
    "95% CI": "95% 置信区间",
    "wins / ties / losses": "胜 / 平 / 负",
    "effect size d_z": "效应量 d_z",
    "detects ≥": "可检出 ≥",
    "Pass rate": "通过率",
    "Regressed samples": "退步的用例",
    "none": "无",
    "All samples": "全部用例",
    "Failures": "失败详情",
    "why": "原因",
    "regressed": "退步",
    "Per-sample changes": "逐条变化",
    "run-to-run spread": "重复运行波动",
}


def tx(text: str, lang: str) -> str:
    return ZH.get(text, t(text, lang)) if lang == "zh" else text


def block(report: dict[str, Any]) -> dict[str, Any] | None:
    """The experiment block, or None when the report has none (or one omk never writes)."""
    found = report.get("experiment")
    if not isinstance(found, dict) or not isinstance(found.get("verdict"), dict):
        return None
    return found


def variants(exp: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in exp.get("variants") or [] if isinstance(v, dict)]


def comparisons(exp: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in exp.get("comparisons") or [] if isinstance(c, dict)]


def pair_verdict(exp: dict[str, Any], comp: dict[str, Any]) -> dict[str, Any]:
    for p in exp["verdict"].get("pairs") or []:
        if p.get("treatment") == comp.get("treatment") and p.get("control") == comp.get("control"):
            return p
    return {}


# ---------------------------------------------------------------- numbers as text


def num(v: Any, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def signed(v: Any, digits: int = 2) -> str:
    return "—" if v is None else f"{v:+.{digits}f}"


def pct(v: Any) -> str:
    return "—" if v is None else f"{100 * v:.0f}%"


def p_value(p: Any) -> str:
    """A p-value people can read: 0.031, 0.0004, 7.6e-06; 1 for 1."""
    if p is None:
        return "—"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3g}"


def ci(delta: dict[str, Any] | None) -> str:
    interval = (delta or {}).get("ci")
    if not isinstance(interval, dict):
        return "—"
    return f"[{signed(interval.get('low'))}, {signed(interval.get('high'))}]"


def money(v: Any) -> str:
    return "—" if v is None else f"${v:.4f}"


def ms(v: Any) -> str:
    return "—" if v is None else f"{v:.0f} ms"


def relative(v: Any) -> str:
    return "" if v is None else f" ({100 * v:+.1f}%)"


# ---------------------------------------------------------------- the variants side by side


def variant_rows(exp: dict[str, Any], lang: str) -> list[tuple[str, list[str]]]:
    """(measure, one value per variant) rows: pass counts, scores, gate, errors, cost, latency."""
    vs = variants(exp)

    def row(label: str, fn: Any) -> tuple[str, list[str]]:
        return tx(label, lang), [fn(v) for v in vs]

    rows = [
        row("role", lambda v: tx(str(v.get("role")), lang)),
        row("passed", lambda v: f"{v.get('passed', 0)}/{v.get('samples', 0)} ({pct(v.get('pass_rate'))})"),
        row("composite", lambda v: num((v.get("scores") or {}).get("composite"))),
    ]
    rows += [row(layer, lambda v, k=layer: num((v.get("scores") or {}).get(k))) for layer in LAYERS if _has_layer(vs, layer)]
    rows += [
        row("layer gate", _gate),
        row("errored", lambda v: str(v.get("errored", 0))),
        row("cost / sample", lambda v: money(v.get("cost_usd"))),
        row("latency / sample", lambda v: ms(v.get("latency_ms"))),
    ]
    if any((v.get("tokens") or {}).get("input") is not None for v in vs):
        rows.append(row("tokens in / out", lambda v: "{} / {}".format(*(_tok((v.get("tokens") or {}).get(k)) for k in ("input", "output")))))
    if any(v.get("spread") is not None for v in vs):
        rows.append(row("run-to-run spread", lambda v: "—" if v.get("spread") is None else f"±{v['spread']:.2f}"))
    return rows


def _has_layer(vs: list[dict[str, Any]], layer: str) -> bool:
    return any((v.get("scores") or {}).get(layer) is not None for v in vs)


def _tok(v: Any) -> str:
    return "—" if v is None else f"{v:,}"


def _gate(v: dict[str, Any]) -> str:
    gate = v.get("gate") or {}
    if gate.get("passed"):
        return "pass"
    failing = [str(x) for x in gate.get("failing") or []]
    return "fail" + (f": {', '.join(failing)}" if failing else "")


# ---------------------------------------------------------------- one comparison


@dataclass(frozen=True, slots=True)
class MeasureRow:
    """One measure's paired change: the composite or a layer."""

    measure: str
    n: int
    mean: str
    ci: str
    significant: bool
    wins_ties_losses: str
    effect: str
    mde: str


def measure_rows(comp: dict[str, Any]) -> list[MeasureRow]:
    layers = comp.get("layers") or {}
    found = [("composite", comp.get("composite"))] + [(k, layers.get(k)) for k in LAYERS if isinstance(layers.get(k), dict)]
    rows = []
    for name, d in found:
        if not isinstance(d, dict):
            continue
        rows.append(
            MeasureRow(
                measure=name,
                n=int(d.get("n") or 0),
                mean=signed(d.get("mean")),
                ci=ci(d),
                significant=bool(d.get("significant")),
                wins_ties_losses=f"{d.get('wins', 0)} / {d.get('ties', 0)} / {d.get('losses', 0)}",
                effect=num(d.get("d_z")),
                mde=num(d.get("mde")),
            )
        )
    return rows


def pass_rate_text(comp: dict[str, Any], lang: str) -> str:
    pr = comp.get("pass_rate") or {}
    change = pr.get("change")
    points = "" if change is None else f" ({100 * change:+.0f} pts)"
    return (
        f"{tx('Pass rate', lang)} {pct(pr.get('control_rate'))} → {pct(pr.get('treatment_rate'))}{points}: "
        f"{pr.get('gained', 0)} gained, {pr.get('lost', 0)} lost, McNemar p = {p_value(pr.get('p_value'))}"
    )


def resources_text(comp: dict[str, Any]) -> str:
    cost, lat = comp.get("cost_usd") or {}, comp.get("latency_ms") or {}
    cost_delta = "—" if cost.get("delta") is None else f"{'+' if cost['delta'] >= 0 else '−'}${abs(cost['delta']):.4f}"
    lat_delta = "—" if lat.get("delta") is None else f"{lat['delta']:+.0f} ms"
    return f"cost {cost_delta}{relative(cost.get('relative'))} · latency {lat_delta}{relative(lat.get('relative'))} per sample"


def coverage_text(comp: dict[str, Any]) -> str:
    """How many samples the comparison rests on, and what it leaves out."""
    d = comp.get("composite") or {}
    err = comp.get("errored") or {}
    parts = [f"n={d.get('n', 0)} paired of {comp.get('samples', 0)} shared samples"]
    if err.get("either"):
        parts.append(f"{err['either']} errored ({comp.get('control')} {err.get('control', 0)}, {comp.get('treatment')} {err.get('treatment', 0)})")
    for key, who in (("only_control", comp.get("control")), ("only_treatment", comp.get("treatment"))):
        if comp.get(key):
            parts.append(f"{len(comp[key])} ran on {who} only")
    spread = comp.get("spread") or {}
    if spread.get("exceeded") is not None:
        parts.append("the change exceeds run-to-run spread" if spread["exceeded"] else "the change is within run-to-run spread")
    return " · ".join(parts)


def regressions(comp: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in comp.get("regressions") or [] if isinstance(r, dict)]


def per_sample(comp: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in comp.get("per_sample") or [] if isinstance(s, dict)]


REASONS = {"score": "score down", "pass_to_fail": "pass → fail", "error": "errored"}


def regression_why(r: dict[str, Any]) -> str:
    return ", ".join(REASONS.get(x, str(x)) for x in r.get("reasons") or [])


# ---------------------------------------------------------------- every variant's results


def cases(exp: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per variant, one entry per result (sample × repeat): `sample_id`, `repeat`, `status`,
    `passed`, `composite`, `duration_ms`, `messages` (why it failed), from `runs[name].results`.

    A block written without those (an older omk) still has each comparison's per-sample
    outcomes; they give every variant's status and pass, without the reasons."""
    runs = exp.get("runs") if isinstance(exp.get("runs"), dict) else {}
    names = [str(v.get("name")) for v in variants(exp)]
    found = {n: runs[n]["results"] for n in names if isinstance(runs.get(n), dict) and isinstance(runs[n].get("results"), list)}
    if len(found) == len(names):
        return found
    return _cases_from_comparisons(exp, names)


def _cases_from_comparisons(exp: dict[str, Any], names: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in names}
    for comp in comparisons(exp):
        for s in per_sample(comp):
            for side in ("control", "treatment"):
                errored = bool(s.get(f"{side}_errored"))
                out.setdefault(str(comp.get(side)), {}).setdefault(
                    str(s.get("sample_id")),
                    {
                        "sample_id": s.get("sample_id"),
                        "repeat": 0,
                        "status": "error" if errored else "ok",
                        "passed": bool(s.get(f"{side}_passed")),
                        "composite": s.get(side),
                        "duration_ms": None,
                        "messages": ["errored (see the variant's report)"] if errored else [],
                    },
                )
    return {n: list(v.values()) for n, v in out.items()}
