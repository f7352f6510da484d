"""The floor: the ten checks of bench/scale.py's suite, hand-written for speed, in one short program.

    python bench/floor.py SUITE_FOLDER OUT_FILE

Reads the suite's `eval-samples.jsonl` and `responses.jsonl` (the recorded outputs), runs each
sample's ten assertions as omk defines them (docs/assertions.md: case-insensitive substrings, a
case-insensitive prefix, `regex` with the default "i" flag, JSON Schema Draft 2020-12 through
jsonschema, ROUGE-N recall over lower-cased [a-z0-9]+ runs, Levenshtein through rapidfuzz, words
split on whitespace, an `any` assert-set), and writes one JSON line per sample: its id and each
assertion's verdict. No loader, no validation of the samples, no report: what any program doing the
same work must pay, the yardstick of `bench/floor_ratio.py`. It handles the suite's ASCII text
only (omk's checks also count CJK words and tokens, which this suite does not have).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any

import jsonschema
import regex
from rapidfuzz.distance import Levenshtein

_TOKEN = re.compile(r"[a-z0-9]+")
_SCHEMAS: dict[str, Any] = {}


def _reject(name: str) -> Any:
    raise ValueError(name)


def json_schema(a: dict[str, Any], output: str, low: str) -> bool:
    key = json.dumps(a["schema"], sort_keys=True)
    validator = _SCHEMAS.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(a["schema"], default=jsonschema.Draft202012Validator)
        validator = _SCHEMAS[key] = cls(a["schema"], format_checker=cls.FORMAT_CHECKER)
    try:
        value = json.loads(output, parse_constant=_reject)
    except ValueError:
        return False
    return bool(validator.is_valid(value))


def rouge(a: dict[str, Any], output: str, low: str) -> bool:
    n = a.get("n", 1)
    ref_words, out_words = _TOKEN.findall(a["reference"].lower()), _TOKEN.findall(low)
    if n == 1:
        ref, cand = Counter(ref_words), Counter(out_words)
    else:
        ref = Counter(zip(*(ref_words[i:] for i in range(n)), strict=False))
        cand = Counter(zip(*(out_words[i:] for i in range(n)), strict=False))
    total = sum(ref.values())
    overlap = sum(map(min, ref.values(), map(cand.get, ref.keys(), repeat(0))))
    return (overlap / total if total else 0.0) >= a.get("threshold", 0.5)


_REGEXES: dict[str, Any] = {}


def regex_(a: dict[str, Any], output: str, low: str) -> bool:
    pattern = _REGEXES.get(a["pattern"])
    if pattern is None:
        pattern = _REGEXES[a["pattern"]] = regex.compile(a["pattern"], regex.IGNORECASE)
    return pattern.search(output) is not None


CHECKS: dict[str, Callable[[dict[str, Any], str, str], bool]] = {
    "contains": lambda a, output, low: a["value"].lower() in low,
    "not_contains": lambda a, output, low: a["value"].lower() not in low,
    "starts_with": lambda a, output, low: low.startswith(a["value"].lower()),
    "regex": regex_,
    "json_schema": json_schema,
    "rouge_n_min": rouge,
    "levenshtein_max": lambda a, output, low: Levenshtein.distance(output, a["reference"]) <= a["value"],
    "word_count_min": lambda a, output, low: len(output.split()) >= a["value"],
    "word_count_max": lambda a, output, low: len(output.split()) <= a["value"],
    "assert-set": lambda a, output, low: any(CHECKS[c["type"]](c, output, low) for c in a["children"]),
}


def main() -> int:
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    with (folder / "responses.jsonl").open(encoding="utf-8") as f:
        outputs = {row["sample_id"]: row["output"] for row in map(json.loads, f)}
    with (folder / "eval-samples.jsonl").open(encoding="utf-8") as f, out.open("w", encoding="utf-8") as w:
        for line in f:
            sample = json.loads(line)
            output = outputs[sample["sample_id"]]
            low = output.lower()
            verdicts = [CHECKS[a["type"]](a, output, low) for a in sample["assertions"]]
            w.write(json.dumps({"sample_id": sample["sample_id"], "passed": verdicts}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
