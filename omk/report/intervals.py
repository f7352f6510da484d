"""The 95% intervals of the run summary as every format shows them (omk/scoring/intervals.py):
a score as `4.21 [4.05, 4.36]`, a rate as `80% [62%, 91%]`, and a figure over fewer than 2
samples as the mean with `(1 sample, no interval)`. A report from before intervals shows its means
as it always did. `variance_line` says where the composite's spread comes from under `--repeat`
or `--judge-repeat`, and what would narrow its interval most."""

from __future__ import annotations

from omk.records.document import Bounds, Summary
from omk.report.i18n import t

NO_INTERVAL = "(1 sample, no interval)"
ADVICE = {
    "samples": "more samples",
    "repeats": "more repeats",
    "judge_calls": "more judge calls",
}


def score(mean: float | None, ci: Bounds | None, shown: bool, lang: str = "en") -> str:
    """A mean score with its interval; `shown`: the report has intervals at all."""
    if mean is None:
        return "—"
    if not shown:
        return f"{mean:.2f}"
    if ci is None:
        return f"{mean:.2f} {t(NO_INTERVAL, lang)}"
    return f"{mean:.2f} [{float(ci.low):.2f}, {float(ci.high):.2f}]"


def rate(value: float | None, ci: Bounds | None, shown: bool, lang: str = "en") -> str:
    if value is None:
        return "—"
    if not shown:
        return f"{value:.0%}"
    if ci is None:
        return f"{value:.0%} {t(NO_INTERVAL, lang)}"
    return f"{value:.0%} [{float(ci.low):.0%}, {float(ci.high):.0%}]"


def layer(summary: Summary, name: str, lang: str = "en") -> str:
    cis = summary.scores_ci
    return score(summary.scores.layer(name), cis.layer(name) if cis else None, cis is not None, lang)


def pass_rate_line(summary: Summary, lang: str = "en") -> str | None:
    """`pass rate 80% [62%, 91%] (Wilson)`, or None in a report from before intervals."""
    if summary.scores_ci is None:
        return None
    return f"{t('pass rate', lang)} {rate(summary.pass_rate, summary.pass_rate_ci, True, lang)} (Wilson, 95%)"


def variance_line(summary: Summary, lang: str = "en") -> str | None:
    """Each source's share of the composite's interval and the advice, or None."""
    v = summary.variance
    if v is None:
        return None
    names = {"sample": t("samples differ", lang), "run": t("run to run", lang), "judge": t("judge noise", lang)}
    shares = ", ".join(f"{names[k]} {float(s):.0%}" for k, s in v.shares)
    line = f"{t('spread of the composite', lang)}: {shares}"
    if v.advice is not None:
        per = t("per dollar", lang) if v.per_dollar else t("per call", lang)
        line += f" · {t('narrows it most', lang)} {per}: {t(ADVICE.get(v.advice, v.advice), lang)}"
    if v.advice_without_samples is not None and v.advice_without_samples != v.advice:
        line += f" ({t('with no more samples', lang)}: {t(ADVICE.get(v.advice_without_samples, v.advice_without_samples), lang)})"
    return line


def pair(ci: Bounds | None) -> str:
    """An interval as a JUnit property's value: `low,high`, or `n<2` below 2 samples."""
    return "n<2" if ci is None else f"{ci.low},{ci.high}"


def junit_properties(summary: Summary) -> list[tuple[str, str]]:
    """`composite_ci` ("low,high", or "n<2") and `pass_rate_ci`; none in a report from before intervals."""
    if summary.scores_ci is None:
        return []
    out = [("pass_rate_ci", pair(summary.pass_rate_ci))]
    if summary.scores.composite is not None:
        out.insert(0, ("composite_ci", pair(summary.scores_ci.composite)))
    if summary.variance is not None and summary.variance.advice:
        out.append(("narrow_interval_with", summary.variance.advice))
    return out
