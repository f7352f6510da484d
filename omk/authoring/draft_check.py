"""A model's drafts, never trusted: read from its reply, made into samples, and checked the way a
samples file is (the loader, then the doctor's error checks), each problem one located line.

A draft only gives a sample's `prompt` (and, for a task, its `rubric`, `mocks` and `assertions`):
omk sets the id, the `provenance` and the trigger checks itself, and no other field is taken, so
a draft cannot set a working folder, an environment or a hook. A task's checks are limited to the
deterministic types in `DRAFT_TYPES`, and a mock may not read a file (`return_file`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omk.authoring.draft_prompts import DRAFT_TYPES, NEAR_MISS, TASK, TRIGGER
from omk.core.errors import InputError
from omk.loader.depth import nested_too_deep
from omk.samples.model import Sample

DRAFTED = "llm-generated"
TASK_FIELDS = ("prompt", "rubric", "mocks", "assertions")
SKIPPED_FIELDS = ("why", "sample_id", "id")  # said by the model, not taken into the sample
FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.S)


class DraftError(ValueError):
    """What is wrong with a reply or a draft: one or more located lines."""

    def __init__(self, lines: list[str]):
        super().__init__("; ".join(lines))
        self.lines = lines


def _decoded(text: str) -> Any:
    """The first JSON value in `text`: the whole text, a fenced block, or from the first { or [."""
    candidates = [text.strip()] + [m.group(1).strip() for m in FENCED.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
        except RecursionError:
            raise DraftError(["the reply's JSON is nested too deeply to read"]) from None
    decoder = json.JSONDecoder()
    last: ValueError | None = None
    for match in re.finditer(r"[\[{]", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except ValueError as exc:
            last = last or exc
        except RecursionError:  # nested past what the JSON reader can follow: no draft in it
            raise DraftError(["the reply's JSON is nested too deeply to read"]) from None
    where = f" ({last})" if last else ""
    raise DraftError([f"the reply holds no JSON value{where}"])


def parse_reply(text: str) -> list[Any]:
    """The drafts in a model's reply: `{"samples": [...]}`, a bare list, or one draft object;
    a fenced code block or text around the JSON is allowed. DraftError when there is none."""
    data = _decoded(text)
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        return list(data["samples"])
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "prompt" in data:
        return [data]
    raise DraftError(['the reply\'s JSON is not {"samples": [...]}'])


def sample_of(kind: str, item: Any, skill: str, sample_id: str) -> dict[str, Any]:
    """The sample (as the loader reads it) a draft of `kind` stands for. DraftError for a draft
    that is not an object with a prompt, or that sets a field a draft may not."""
    where = f"samples[0] ({sample_id})"
    if isinstance(item, str) and kind != TASK:
        item = {"prompt": item}
    if not isinstance(item, dict):
        raise DraftError([f"{where}: a draft must be a JSON object, found {type(item).__name__}"])
    sample: dict[str, Any] = {"sample_id": sample_id, "prompt": item.get("prompt"), "provenance": DRAFTED}
    if kind in (TRIGGER, NEAR_MISS):
        check: dict[str, Any] = {"type": "skill_used", "value": skill}
        if kind == NEAR_MISS:
            check["not"] = True
        sample["assertions"] = [check]
        return sample
    taken = [k for k in item if k not in TASK_FIELDS and k not in SKIPPED_FIELDS]
    if taken:
        allowed = ", ".join(TASK_FIELDS)
        raise DraftError([f"{where} {k}: not a field a drafted sample may have (only {allowed})" for k in taken])
    for key in TASK_FIELDS[1:]:
        if key in item:
            sample[key] = item[key]
    return sample


def policy_problems(sample: dict[str, Any]) -> list[str]:
    """What a drafted task may not do, whatever the loader allows: a check outside DRAFT_TYPES,
    a mock that reads a file."""
    where, problems = f"samples[0] ({sample.get('sample_id')})", []
    for path, item in _assertions(sample.get("assertions"), "assertions"):
        kind = item.get("type")
        if isinstance(kind, str) and kind not in DRAFT_TYPES:
            problems.append(f"{where} {path}.type: {kind!r} is not a type a drafted sample may use; use one of {', '.join(DRAFT_TYPES)}")
    mocks = sample.get("mocks")
    for i, mock in enumerate(mocks if isinstance(mocks, list) else []):
        if isinstance(mock, dict) and "return_file" in mock:
            problems.append(f"{where} mocks[{i}].return_file: a drafted mock gives its answer in `return`, it reads no file")
    return problems


def _assertions(items: Any, path: str, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if not isinstance(items, list) or depth > 16:
        return found
    for i, item in enumerate(items):
        if isinstance(item, dict):
            found.append((f"{path}[{i}]", item))
            found += _assertions(item.get("children"), f"{path}[{i}].children", depth + 1)
    return found


def block_of(sample: dict[str, Any], comment: str, indent: int = 2) -> str:
    """One sample as an item of a YAML `samples:` list, after its comment line."""
    import yaml

    text = yaml.dump([sample], Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)
    pad = " " * indent
    body = "\n".join(f"{pad}{line}" if line else line for line in text.rstrip("\n").split("\n"))
    return f"{pad}# {' '.join(comment.split())}\n{body}"


def _dumper() -> Any:
    """PyYAML's safe dumper, writing a text of several lines as a `|` block, as a person would."""
    import yaml

    class DraftYamlDumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> Any:
        style = "|" if "\n" in value and value == value.rstrip(" ") and "\r" not in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    DraftYamlDumper.add_representer(str, text)
    return DraftYamlDumper


def checked(kind: str, sample: dict[str, Any], name: str, base_dir: Path) -> tuple[Sample, str]:
    """The sample loaded from the YAML it is written as, and that YAML; DraftError with every
    problem, located in that YAML (`NAME:LINE: samples[0] (id) field: what is wrong`), when the
    loader refuses it, when a drafted sample may not do what it does, or when the doctor finds an
    error in it."""
    from omk.doctor.diagnostics import sample_diagnostics
    from omk.loader import load_text

    deep = nested_too_deep(sample)
    if deep is not None:  # the YAML writer recurses: a draft past the loader's depth is never written
        raise DraftError([f"{name}: samples[0] ({sample.get('sample_id')}) {deep}"])
    text = "samples:\n" + block_of(sample, "draft") + "\n"
    problems = [f"{name}: {line}" for line in policy_problems(sample)] if kind == TASK else []
    try:
        loaded = load_text(text, name=name, base_dir=base_dir, strict=True)
    except InputError as exc:
        raise DraftError(problems + exc.lines()) from None
    if problems:
        raise DraftError(problems)
    (drafted,) = loaded.samples
    errors = [d for d in sample_diagnostics([drafted]) if d.severity == "error"]
    if errors:
        raise DraftError([f"{name}: samples[0] ({drafted.sample_id}): {d.message}" for d in errors])
    return drafted, text


@dataclass(slots=True)
class Deduper:
    """Prompts kept so far; a new one is a near-duplicate when either one's ROUGE-1 recall against
    the other reaches the doctor's `near_duplicate` threshold (omk.doctor.diagnostics)."""

    bags: list[tuple[str, Counter[str]]]

    @classmethod
    def of(cls, samples: list[Sample]) -> Deduper:
        found = cls([])
        for s in samples:
            found.keep(s.sample_id, s.prompt)
        return found

    def duplicate_of(self, prompt: str) -> str | None:
        from omk.doctor.diagnostics import DUPLICATE_ROUGE, rouge1_recall

        bag = _bag(prompt)
        if not bag:
            return None
        for sample_id, other in self.bags:
            if other and max(rouge1_recall(other, bag), rouge1_recall(bag, other)) >= DUPLICATE_ROUGE:
                return sample_id
        return None

    def keep(self, sample_id: str, prompt: str) -> None:
        self.bags.append((sample_id, _bag(prompt)))


def _bag(text: str) -> Counter[str]:
    from omk.assertions.tokenize import tokenize

    return Counter(tokenize(text))
