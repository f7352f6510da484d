"""The generated suite of benchmark 1: N samples × 10 deterministic assertions, recorded outputs.

Each sample asks for a security review of a snippet; its recorded output is a JSON document
(so `json_schema` has something to check). Sample `i` is built to fail some assertions on
purpose (`FLAWS`), so every tool has both passes and failures to compute, and the three tools'
per-assertion pass counts can be compared to show they did the same work.

The same ten checks in each tool's own words (see docs/benchmarks.md for where they differ):

| # | omk / omk 0.54       | promptfoo                 |
|---|----------------------|---------------------------|
| 1 | contains             | icontains                 |
| 2 | not_contains         | not-icontains             |
| 3 | starts_with          | starts-with               |
| 4 | regex                | regex                     |
| 5 | json_schema          | is-json with a schema     |
| 6 | rouge_n_min          | rouge-n                   |
| 7 | levenshtein_max      | levenshtein               |
| 8 | word_count_min       | word-count {min}          |
| 9 | word_count_max       | word-count {max}          |
| 10| assert-set (any)     | assert-set (threshold .5) |

Values avoid whitespace and CJK in `contains` values because omk 0.54 rejects them by default
(its "rule A"); everything is ASCII so that the three tokenizers of ROUGE agree.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ASSERTION_NAMES = (
    "contains",
    "not_contains",
    "starts_with",
    "regex",
    "json_schema",
    "rouge_n_min",
    "levenshtein_max",
    "word_count_min",
    "word_count_max",
    "assert-set",
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict", "severity", "finding", "fix", "summary"],
    "properties": {
        "verdict": {"enum": ["vulnerable", "safe"]},
        "severity": {"enum": ["low", "medium", "high"]},
        "finding": {"type": "string", "minLength": 5},
        "fix": {"type": "string"},
        "summary": {"type": "string", "maxLength": 600},
        "line": {"type": "integer", "minimum": 1},
    },
}

TABLES = ("users", "orders", "invoices", "sessions", "accounts", "payments", "tickets")
COLUMNS = ("name", "email", "id", "token", "owner", "status", "region")
LANGS = ("Python", "Node", "Java", "Go", "PHP", "Ruby")

# Which assertion sample i fails on purpose: i % 10 picks the flaw (0 = none).
FLAWS = {
    1: "no_injection_word",  # contains fails
    2: "says_harmless",  # not_contains fails
    3: "reordered_keys",  # starts_with fails
    4: "no_parameterized",  # regex fails, the assert-set still passes (bind)
    5: "bad_severity",  # json_schema fails
    6: "other_summary",  # rouge fails (and levenshtein)
    7: "typos",  # levenshtein fails, everything else passes
    8: "no_remedy_words",  # assert-set fails
    9: "rambling",  # word_count_max fails
}


def _snippet(i: int, rnd: random.Random) -> tuple[str, str, str]:
    return rnd.choice(TABLES), rnd.choice(COLUMNS), rnd.choice(LANGS)


def gold_answer(i: int) -> dict[str, Any]:
    """What a good reviewer answers for sample i (the reference text)."""
    rnd = random.Random(i)
    table, column, lang = _snippet(i, rnd)
    line = 3 + i % 40
    return {
        "verdict": "vulnerable",
        "severity": "high",
        "finding": f"sql injection: the {lang} handler builds the {table} query by concatenating {column}",
        "fix": f"use parameterized queries: bind {column} as a parameter of a prepared statement",
        "summary": (
            f"the {table} lookup at line {line} concatenates untrusted {column} into sql, "
            f"so an attacker controls the query and can read every row"
        ),
        "line": line,
    }


def recorded_output(i: int) -> str:
    """The output recorded for sample i: the gold answer with this sample's flaw, if any."""
    answer = gold_answer(i)
    flaw = FLAWS.get(i % 10)
    rnd = random.Random(10_000 + i)
    table, column, lang = _snippet(i, random.Random(i))
    if flaw == "no_injection_word":
        answer["finding"] = f"the {lang} handler builds the {table} query by concatenating {column}"
    elif flaw == "says_harmless":
        answer["summary"] += "; otherwise the handler looks harmless"
    elif flaw == "no_parameterized":
        answer["fix"] = f"bind {column} through the driver instead of string concatenation"
    elif flaw == "bad_severity":
        answer["severity"] = "urgent"
    elif flaw == "other_summary":
        answer["summary"] = "rotate credentials, enable audit logging and review access rights for operators"
    elif flaw == "typos":
        text = list(answer["summary"])
        for _ in range(25):
            k = rnd.randrange(len(text))
            text[k] = rnd.choice("xyzqj")
        answer["summary"] = "".join(text)
    elif flaw == "no_remedy_words":
        answer["fix"] = f"use parameterized queries and validate {column} on input"
    elif flaw == "rambling":
        answer["notes"] = " ".join(rnd.choice(COLUMNS + TABLES) for _ in range(90))
    if flaw == "reordered_keys":
        answer = {"severity": answer.pop("severity"), **answer}
    return json.dumps(answer, ensure_ascii=False)


def omk_sample(i: int) -> dict[str, Any]:
    gold = json.dumps(gold_answer(i), ensure_ascii=False)
    table, column, lang = _snippet(i, random.Random(i))
    return {
        "sample_id": f"s{i:05d}",
        "prompt": f"[s{i:05d}] Review the {lang} handler that looks up {table} by {column}; answer as JSON.",
        "capability": ["security-review", "sql"],
        "difficulty": ["easy", "medium", "hard"][i % 3],
        "assertions": [
            {"type": "contains", "value": "injection"},
            {"type": "not_contains", "value": "harmless"},
            {"type": "starts_with", "value": '{"verdict"'},
            {"type": "regex", "pattern": r"parameteri[sz]ed (quer(y|ies)|statements?)"},
            {"type": "json_schema", "schema": SCHEMA},
            {"type": "rouge_n_min", "reference": gold, "n": 1, "threshold": 0.75},
            {"type": "levenshtein_max", "value": 20, "reference": gold},
            {"type": "word_count_min", "value": 20},
            {"type": "word_count_max", "value": 90},
            {
                "type": "assert-set",
                "mode": "any",
                "children": [{"type": "contains", "value": "prepared"}, {"type": "contains", "value": "bind"}],
            },
        ],
    }


def promptfoo_test(i: int, sample: dict[str, Any], output: str) -> dict[str, Any]:
    """The same sample as a promptfoo test: the echo provider returns `vars.output` verbatim."""
    a = {x["type"]: x for x in sample["assertions"]}
    words = (a["word_count_min"]["value"], a["word_count_max"]["value"])
    return {
        "description": sample["sample_id"],
        "vars": {"output": output},
        "assert": [
            {"type": "icontains", "value": a["contains"]["value"]},
            {"type": "not-icontains", "value": a["not_contains"]["value"]},
            {"type": "starts-with", "value": a["starts_with"]["value"]},
            {"type": "regex", "value": a["regex"]["pattern"]},
            {"type": "is-json", "value": a["json_schema"]["schema"]},
            {"type": "rouge-n", "value": a["rouge_n_min"]["reference"], "threshold": a["rouge_n_min"]["threshold"]},
            {"type": "levenshtein", "value": a["levenshtein_max"]["reference"], "threshold": a["levenshtein_max"]["value"]},
            {"type": "word-count", "value": {"min": words[0]}},
            {"type": "word-count", "value": {"max": words[1]}},
            {
                "type": "assert-set",
                "threshold": 0.5,
                "assert": [{"type": "icontains", "value": c["value"]} for c in a["assert-set"]["children"]],
            },
        ],
    }


def write_suite(folder: Path, n: int) -> dict[str, Path]:
    """Write the suite for all three tools; returns the paths by role."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = [omk_sample(i) for i in range(n)]
    outputs = [recorded_output(i) for i in range(n)]
    paths = {
        "samples": folder / "eval-samples.json",
        "replay": folder / "responses.jsonl",
        "promptfoo_config": folder / "promptfooconfig.yaml",
        "promptfoo_tests": folder / "promptfoo-tests.json",
        "legacy_outputs": folder / "legacy-outputs",
    }
    paths["samples"].write_text(json.dumps({"samples": samples}, ensure_ascii=False), encoding="utf-8")
    with paths["replay"].open("w", encoding="utf-8") as f:
        for s, out in zip(samples, outputs, strict=True):
            f.write(json.dumps({"sample_id": s["sample_id"], "output": out}, ensure_ascii=False) + "\n")
    tests = [promptfoo_test(i, s, out) for i, (s, out) in enumerate(zip(samples, outputs, strict=True))]
    paths["promptfoo_tests"].write_text(json.dumps(tests, ensure_ascii=False), encoding="utf-8")
    paths["promptfoo_config"].write_text(
        "description: omk bench suite 1\n"
        "prompts:\n  - '{{output}}'\n"
        "providers:\n  - echo\n"
        "tests: file://promptfoo-tests.json\n",
        encoding="utf-8",
    )
    # omk 0.54 runs a command per sample: one protocol reply file per sample, printed by exec.sh.
    legacy = paths["legacy_outputs"]
    legacy.mkdir(exist_ok=True)
    for s, out in zip(samples, outputs, strict=True):
        (legacy / f"{s['sample_id']}.json").write_text(json.dumps({"ok": True, "output": out}), encoding="utf-8")
    return paths
