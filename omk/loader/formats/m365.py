"""Microsoft 365 Agents Toolkit eval documents (`runevals`), schema 1.x, read as they are.

    {"schemaVersion": "1.2.0", "description": "…",
     "default_evaluators": {"Relevance": {}, "Coherence": {}},
     "items": [{"prompt", "expected_response", "context", "evaluators", "evaluators_mode",
                "testId", "category", "notes", "name"},
               {"name": "…", "turns": [{"prompt", "expected_response", "evaluators", …}, …]}]}

or the legacy bare array `[{"prompt", "expected_response"}, …]` (read as is; `omk migrate`
upgrades the file). Each item becomes one `Sample` (`source_format="m365"`); a `turns` item
becomes a conversation (`Sample.turns`, one `Turn` per turn, each with its own checks).

Evaluators become assertions: Relevance → `relevance`, Coherence → `coherence`, Groundedness →
`groundedness` (with the item's `context`; an item without one has the metric skipped, visibly), Similarity → `similarity` (with `expected_response`),
Citations → `citations`, ExactMatch → `exact_match`, PartialMatch → `partial_match`. Which run:
the item's (or turn's) `evaluators` on top of the defaults (`evaluators_mode: extend`, the
default; the item's options win for an evaluator named in both) or instead of them (`replace`);
the defaults are `default_evaluators`, else Relevance and Coherence.

The item `context` is grounding material for Groundedness; it is not sent to the agent (runevals
sends the prompt alone). `testId`, `category`, `notes` and `name` are accepted on every item (the
M365 documentation lists them; the 1.7 JSON schema allows `name` on threads only). Output-only
fields (`response`, `scores`, `status`…) are accepted and ignored, so a results file reads as a
dataset.
Decisions where the M365 sources disagree are in docs/formats.md.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from omk.assertions.m365 import CITATION_FORMATS, TELEMETRY_EVALUATORS
from omk.core.errors import Problem
from omk.loader.document import Document, Path_
from omk.loader.formats.common import Reader
from omk.loader.messages import did_you_mean, kind_of, one_of, show
from omk.samples.model import AssertionSpec, Sample, Turn

SUPPORTED = "1.x"
CURRENT_VERSION = "1.2.0"  # what `omk migrate` writes
VERSION = re.compile(r"^1\.\d+\.\d+$")
EVALUATOR_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")

SYSTEM_DEFAULTS: dict[str, dict[str, Any]] = {"Relevance": {}, "Coherence": {}}
ASSERTION_TYPE = {
    "Relevance": "relevance",
    "Coherence": "coherence",
    "Groundedness": "groundedness",
    "Similarity": "similarity",
    "Citations": "citations",
    "ExactMatch": "exact_match",
    "PartialMatch": "partial_match",
}
LIKERT = ("Relevance", "Coherence", "Groundedness", "Similarity")
OPTIONS: dict[str, tuple[str, ...]] = {
    **{name: ("threshold",) for name in LIKERT},
    "Citations": ("threshold", "citation_format"),
    "ExactMatch": ("case_sensitive", "mode"),  # `mode` is omk's: "contains" (default) or "equals"
    "PartialMatch": ("threshold", "case_sensitive"),
}
NEEDS_EXPECTED = ("Similarity", "ExactMatch", "PartialMatch")
TELEMETRY = TELEMETRY_EVALUATORS  # loaded as `m365_telemetry`: reported as not applicable, never scored
MODES = ("extend", "replace")

OUTPUT_ONLY = ("response", "citations", "scores", "diagnostics", "status", "error")
LABELS = ("testId", "category", "notes", "name", "description", "extensions")
TOOL_KEYS = ("allowed_tools", "allowed_tools_mode")  # schema 1.11
# allowed_tools_mode → omk's tool assertions: only the listed tools may be called, each listed
# tool must be called, or both.
TOOL_MODES = {"subset": ("tools_only",), "all": ("tools_called",), "exact": ("tools_only", "tools_called")}
SINGLE_KEYS = ("prompt", "expected_response", "context", "evaluators", "evaluators_mode", *TOOL_KEYS, *LABELS, *OUTPUT_ONLY)
THREAD_KEYS = ("turns", "conversation_id", "summary", *LABELS)
TURN_KEYS = ("prompt", "expected_response", "context", "evaluators", "evaluators_mode", *TOOL_KEYS, "extensions", *OUTPUT_ONLY)
MAX_TURNS = 20

Evaluators = dict[str, tuple[dict[str, Any], Path_]]  # name -> (options, where it was written)


def _unknown_field(key: str, allowed: tuple[str, ...], note: str) -> str:
    """A misspelling gets its suggestion; any other field is said to be unsupported, as it is."""
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.75)
    if close or note:
        return f'unknown field{did_you_mean(key, close) if close else ""}{note}'
    return (
        "is not a field omk reads on an M365 item (a newer M365 schema's field omk does not support yet, "
        "or your own): remove it, or keep custom labels in \"extensions\""
    )


def is_pairs(data: dict[str, Any]) -> bool:
    """The legacy `{"prompts": [...], "expected_responses": [...]}` document (no `items`)."""
    return "prompts" in data and "items" not in data and "samples" not in data


def legacy_pairs(data: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Path_]]] | str:
    """Items `{prompt, expected_response?}` paired by position, each with where its fields were
    written; or `"FIELD: what is wrong"` when the two lists do not pair up."""
    prompts, expected = data["prompts"], data.get("expected_responses")
    if not isinstance(prompts, list) or not prompts:
        return f"prompts: must be a non-empty list of prompts (got {kind_of(prompts) if prompts != [] else 'an empty list'})"
    if expected is not None and not isinstance(expected, list):
        return f"expected_responses: must be a list, one expected response per prompt (got {kind_of(expected)})"
    if expected is not None and len(expected) != len(prompts):
        return (
            f"expected_responses: has {len(expected)} entries but prompts has {len(prompts)}; "
            "the lists pair by position, so they must be the same length"
        )
    out = []
    for i, prompt in enumerate(prompts):
        item: dict[str, Any] = {"prompt": prompt}
        at: dict[str, Path_] = {"prompt": ("prompts", i)}
        if expected is not None and expected[i] is not None:  # null: this prompt has none
            item["expected_response"], at["expected_response"] = expected[i], ("expected_responses", i)
        out.append((item, at))
    return out


def read_m365(
    doc: Document, file: str, base_dir: Path, first_ids: dict[str, tuple[str, int | None]], stem: str | None = None
) -> tuple[list[Sample], list[Problem]]:
    """`stem` names generated ids (`<stem>-<n>`); default: the file's name without extension."""
    reader = _M365Reader(doc, file, base_dir, first_ids)
    reader.stem = stem or Path(file).stem or "item"
    samples = reader.run()
    reader.problems.sort(key=lambda p: p.line or 0)
    return (samples if not reader.problems else []), reader.problems


class _M365Reader(Reader):
    stem = "item"  # generated ids are `<stem>-<n>`; read_m365 sets the file's name

    def run(self) -> list[Sample]:
        self.parse_issues()
        data = self.doc.data
        if isinstance(data, dict) and is_pairs(data):
            return self._pairs(data)
        prefix: Path_
        if isinstance(data, list):
            items, prefix = data, ()
            defaults: Evaluators | None = None
        else:
            self._version(data)
            items, prefix = data.get("items"), ("items",)
            if "items" not in data:
                self.problem((), 'missing "items": an eval document is {"schemaVersion": "1.2.0", "items": [...]}')
                return []
            if not isinstance(items, list) or not items:
                self.problem(("items",), f"must be a non-empty list of items (got {kind_of(items) if items != [] else 'an empty list'})")
                return []
            defaults = None
            if "default_evaluators" in data:
                defaults = self._evaluators(data["default_evaluators"], ("default_evaluators",), "", ("default_evaluators",))
        samples = []
        for index, item in enumerate(items):
            sample = self._item(item, prefix + (index,), index, defaults)
            if sample is not None:
                samples.append(sample)
        return samples

    def _pairs(self, data: dict[str, Any]) -> list[Sample]:
        """The oldest legacy shape, `{"prompts": [...], "expected_responses": [...]}`: each prompt
        is an item with the expected response at the same position (what runevals upgrades it to)."""
        pairs = legacy_pairs(data)
        if isinstance(pairs, str):
            key = "expected_responses" if "expected_responses" in pairs.split(":")[0] else "prompts"
            self.problem((key,), pairs.split(": ", 1)[1], "", (key,))
            return []
        samples = []
        for index, (item, at) in enumerate(pairs):
            bad = [k for k, v in item.items() if not isinstance(v, str) or (k == "prompt" and not v.strip())]
            for key in bad:
                what = "a non-empty string" if key == "prompt" else "a string"
                self.problem(at[key], f"must be {what} (got {kind_of(item[key])})", "", at[key])
            if not bad and (sample := self._item(item, ("prompts", index), index, None)) is not None:
                samples.append(sample)
        return samples

    def _version(self, data: dict[str, Any]) -> None:
        version = data.get("schemaVersion")
        if "schemaVersion" not in data:
            return  # the schema wants it; runevals reads such a document as current, and so do we
        if not isinstance(version, str) or not VERSION.match(version):
            self.problem(
                ("schemaVersion",),
                f"{show(version)} is not supported: omk reads M365 eval documents of schema {SUPPORTED} "
                "(\"1.0.0\" … \"1.7.0\"); see the schema changelog of @microsoft/m365-copilot-eval",
            )

    # --- evaluators -------------------------------------------------------------------------

    def _evaluators(self, value: Any, path: Path_, where: str, rel: Path_) -> Evaluators | None:
        if not isinstance(value, dict):
            self.problem(path, f'must be an object mapping evaluator names to options, e.g. {{"Relevance": {{}}}} (got {kind_of(value)})', where, rel)
            return None
        out: Evaluators = {}
        ok = True
        for name, options in value.items():
            at, at_rel = path + (name,), rel + (name,)
            if name in TELEMETRY:  # its options are runevals' (capability, selector …): kept, not checked
                out[name] = ({}, at)
                continue
            if name not in ASSERTION_TYPE:
                hint = did_you_mean(name, ASSERTION_TYPE) if EVALUATOR_NAME.match(name) else ""
                self.problem(
                    at,
                    f'unknown evaluator "{name}"{hint}: omk runs {one_of(ASSERTION_TYPE)} (names are case-sensitive); '
                    "runevals custom evaluators (custom-evaluators/<name>/) are not supported: write an omk `custom` "
                    "assertion or a rubric instead",
                    where,
                    at_rel,
                )
                ok = False
                continue
            if options is None:
                options = {}
            if not isinstance(options, dict):
                self.problem(at, f"options must be an object ({{}} for the defaults), got {kind_of(options)}", where, at_rel)
                ok = False
                continue
            if self._options(name, options, at, where, at_rel):
                out[name] = (options, at)
            else:
                ok = False
        return out if ok else None

    def _options(self, name: str, options: dict[str, Any], path: Path_, where: str, rel: Path_) -> bool:
        allowed = OPTIONS[name]
        ok = True
        for key, value in options.items():
            at, at_rel = path + (key,), rel + (key,)
            if key not in allowed:
                self.problem(at, f"unknown option for {name}{did_you_mean(key, allowed)}; allowed: {one_of(allowed, 'and')}", where, at_rel)
                ok = False
            elif key == "threshold":
                ok &= self._threshold(name, value, at, where, at_rel)
            elif key == "case_sensitive" and not isinstance(value, bool):
                self.problem(at, f"must be true or false (got {kind_of(value)})", where, at_rel)
                ok = False
            elif key == "citation_format" and value not in CITATION_FORMATS:
                self.problem(at, f"must be {one_of(CITATION_FORMATS)} (got {kind_of(value)})", where, at_rel)
                ok = False
            elif key == "mode" and value not in ("contains", "equals"):
                self.problem(at, f'must be "contains" or "equals" (got {kind_of(value)})', where, at_rel)
                ok = False
        return ok

    def _threshold(self, name: str, value: Any, path: Path_, where: str, rel: Path_) -> bool:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if name == "Citations":
            good, want = number and float(value).is_integer() and value >= 1, "a whole number of at least 1"
        elif name == "PartialMatch":
            good, want = number and 0 <= value <= 1, "a number from 0 to 1"
        else:
            good, want = number and 1 <= value <= 5, "a number from 1 to 5"
        if not good:
            self.problem(path, f"must be {want} (got {kind_of(value)})", where, rel)
        return good

    def _resolve(self, defaults: Evaluators | None, unit: dict[str, Any], path: Path_, where: str, rel: Path_) -> Evaluators | None:
        """The evaluators one item or turn runs (extend / replace over the defaults)."""
        base = defaults if defaults is not None else {k: (v, path) for k, v in SYSTEM_DEFAULTS.items()}
        mode = unit.get("evaluators_mode", "extend")
        own = self._evaluators(unit["evaluators"], path + ("evaluators",), where, rel + ("evaluators",)) if "evaluators" in unit else {}
        if mode not in MODES:
            self.problem(path + ("evaluators_mode",), f'must be "extend" or "replace" (got {kind_of(mode)})', where, rel + ("evaluators_mode",))
            return None
        if own is None:
            return None
        if "evaluators" not in unit:
            return dict(base)
        return dict(own) if mode == "replace" else {**base, **own}

    def _specs(self, chosen: Evaluators, unit: dict[str, Any], path: Path_, where: str, rel: Path_, label: str, query: str | None) -> list[AssertionSpec] | None:
        specs = []
        expected = unit.get("expected_response")
        context = unit.get("context")
        ok = True
        for name, (options, at) in chosen.items():
            origin = "default_evaluators" if at[:1] == ("default_evaluators",) else "evaluators" if at != path else "the default evaluators"
            if name in NEEDS_EXPECTED and not (isinstance(expected, str) and expected.strip()):
                self.problem(path + ("expected_response",), f"missing: {name} (from {origin}) compares the response with it", where, rel + ("expected_response",))
                ok = False
                continue
            if name in TELEMETRY:
                specs.append(self.spec({"type": "m365_telemetry", "evaluator": name}, at, f"{label}.evaluators.{name}", where, rel + ("evaluators", name)))
                continue
            raw: dict[str, Any] = {"type": ASSERTION_TYPE[name], **options}
            if name in ("Similarity", "PartialMatch"):
                raw["reference"] = expected
            elif name == "ExactMatch":
                raw["value"] = expected
            elif name == "Groundedness" and isinstance(context, str) and context.strip():
                raw["context"] = context  # without one the metric is skipped at run time, as runevals
            if query is not None and name in LIKERT:
                raw["query"] = query
            specs.append(self.spec(raw, at, f"{label}.evaluators.{name}", where, rel + ("evaluators", name)))
        tools = self._tools(unit, path, where, rel, label)
        return specs + tools if ok and tools is not None else None

    def _tools(self, unit: dict[str, Any], path: Path_, where: str, rel: Path_, label: str) -> list[AssertionSpec] | None:
        """`allowed_tools` (+ `allowed_tools_mode`, default "subset") as omk tool assertions."""
        if "allowed_tools" not in unit:
            if "allowed_tools_mode" in unit:
                self.problem(path + ("allowed_tools_mode",), 'goes with "allowed_tools" (the list it applies to)', where, rel + ("allowed_tools_mode",))
                return None
            return []
        names, mode = unit["allowed_tools"], unit.get("allowed_tools_mode", "subset")
        ok = True
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
            self.problem(path + ("allowed_tools",), f"must be a non-empty list of tool names (got {show(names)})", where, rel + ("allowed_tools",))
            ok = False
        if mode not in TOOL_MODES:
            self.problem(path + ("allowed_tools_mode",), f"must be {one_of(TOOL_MODES)} (got {kind_of(mode)})", where, rel + ("allowed_tools_mode",))
            ok = False
        if not ok:
            return None
        at = path + ("allowed_tools",)
        return [self.spec({"type": kind, "values": names}, at, f"{label}.allowed_tools", where, rel + ("allowed_tools",)) for kind in TOOL_MODES[mode]]

    # --- items ------------------------------------------------------------------------------

    def _text(self, unit: dict[str, Any], key: str, path: Path_, where: str, rel: Path_, required: bool = False) -> bool:
        if key not in unit:
            if required:
                self.problem(path, f'missing "{key}"', where, rel)
            return not required
        value = unit[key]
        if not isinstance(value, str) or (required and not value.strip()):
            self.problem(path + (key,), f"must be {'a non-empty string' if required else 'a string'} (got {kind_of(value)})", where, rel + (key,))
            return False
        return True

    def _unknown(self, unit: dict[str, Any], allowed: tuple[str, ...], path: Path_, where: str, rel: Path_, note: str = "") -> bool:
        ok = True
        for key in unit:
            if key not in allowed:
                self.problem(path + (key,), _unknown_field(key, allowed, note), where, rel + (key,))
                ok = False
        return ok

    def _item(self, item: Any, path: Path_, index: int, defaults: Evaluators | None) -> Sample | None:
        label = f"prompts[{index}]" if path[:1] == ("prompts",) else f"items[{index}]"
        if not isinstance(item, dict):
            self.problem(path, f"each item must be an object with a prompt (got {kind_of(item)})", label, ())
            return None
        test_id, name = item.get("testId"), item.get("name")
        shown = test_id if isinstance(test_id, str) and test_id else name if isinstance(name, str) and name else None
        where = f"{label} ({shown})" if shown else label
        count = len(self.problems)
        for key in ("testId", "category", "notes", "name", "description"):
            self._text(item, key, path, where, ())
        if isinstance(test_id, str) and not test_id.strip():
            self.problem(path + ("testId",), "must not be empty", where, ("testId",))
        if "turns" in item:
            note = ' (a conversation has "turns"; its prompts and evaluators go on each turn)' if "prompt" in item or "evaluators" in item else ""
            self._unknown(item, THREAD_KEYS, path, where, (), note)
            turns = self._turns(item, path, label, where, defaults)
        else:
            self._unknown(item, SINGLE_KEYS, path, where, ())
            self._text(item, "prompt", path, where, (), required=True)
            self._text(item, "expected_response", path, where, ())
            self._text(item, "context", path, where, ())
            turns = None
            specs = None
            chosen = self._resolve(defaults, item, path, where, ())
            if chosen is not None and len(self.problems) == count:
                specs = self._specs(chosen, item, path, where, (), label, None)
        if len(self.problems) > count:
            return None
        given = test_id if isinstance(test_id, str) else None
        fallbacks = [name if isinstance(name, str) else "", f"{self.stem}-{index + 1}"]
        sample_id = self.claim_id(given, fallbacks, path, where, ("testId",))
        sample = Sample(
            sample_id=sample_id,
            prompt=turns[0].prompt if turns else item["prompt"],
            raw=item,
            source=self.ref(path, label),
            base_dir=self.base_dir,
            category=item.get("category"),
            source_format="m365",
        )
        if turns:
            sample.turns = tuple(turns)
        else:
            sample.assertions = specs or []
        return sample

    def _turns(self, item: dict[str, Any], path: Path_, label: str, where: str, defaults: Evaluators | None) -> list[Turn] | None:
        turns = item["turns"]
        at = path + ("turns",)
        if not isinstance(turns, list) or not turns:
            self.problem(at, f"must be a non-empty list of turns (got {kind_of(turns) if turns != [] else 'an empty list'})", where, ("turns",))
            return None
        if len(turns) > MAX_TURNS:
            self.problem(at, f"has {len(turns)} turns; an M365 conversation has at most {MAX_TURNS}", where, ("turns",))
            return None
        out = []
        for j, turn in enumerate(turns):
            tpath, trel, tlabel = at + (j,), ("turns", j), f"{label}.turns[{j}]"
            if not isinstance(turn, dict):
                self.problem(tpath, f"each turn must be an object with a prompt (got {kind_of(turn)})", where, trel)
                continue
            count = len(self.problems)
            self._unknown(turn, TURN_KEYS, tpath, where, trel)
            self._text(turn, "prompt", tpath, where, trel, required=True)
            self._text(turn, "expected_response", tpath, where, trel)
            self._text(turn, "context", tpath, where, trel)
            chosen = self._resolve(defaults, turn, tpath, where, trel)
            if chosen is None or len(self.problems) > count:
                continue
            specs = self._specs(chosen, turn, tpath, where, trel, tlabel, turn["prompt"])
            if specs is None:
                continue
            out.append(
                Turn(
                    prompt=turn["prompt"],
                    assertions=specs,
                    expected=turn.get("expected_response"),
                    raw=turn,
                    source=self.ref(tpath, tlabel),
                )
            )
        return out if len(out) == len(turns) else None
