"""`omk sample SKILL_DIR`: the skill read, the model asked (omk.authoring.drafting), and the text
to write: a new samples file, or what `--append` adds at the end of an existing one (whose own
bytes are never changed). Whatever is written is loaded again with the loader before it is
returned, so the file written is one `omk eval` and `omk doctor` read without an error.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from omk.authoring.drafting import Counts, Drafted, DraftJob, draft_samples, public_spec
from omk.authoring.skill_source import SkillSource, read_skill
from omk.core.errors import InputError
from omk.samples.model import Sample

YAML_SUFFIXES = (".yaml", ".yml")
ITEM = re.compile(r"^( *)- ")


@dataclass(slots=True)
class GenerateOptions:
    skill_dir: Path
    spec: str | None  # the model's target spec; None: omk.yaml's `target:`
    counts: Counts
    output: Path | None = None  # None: the text is printed
    append: bool = False
    concurrency: int = 4
    timeout: float | None = None
    retries: int | None = None
    lang: str | None = None  # the lines for stderr: `en` or `zh`; None: omk.yaml's `lang:`, else en
    cwd: Path = field(default_factory=Path.cwd)


@dataclass(slots=True)
class Generated:
    """The text to write (`text`: the whole new file, or what is appended), the drafting's
    account, the skill, the model's spec as named in the file, and the language of the lines
    for stderr."""

    text: str
    drafted: Drafted
    skill: SkillSource
    spec: str
    lang: str = "en"


@dataclass(slots=True)
class _Existing:
    samples: list[Sample]
    text: str
    indent: int


def _existing(output: Path | None, append: bool) -> _Existing | None:
    """The file `--append` adds to (loaded: its ids and prompts), or None for a new file;
    InputError when the output is not one omk may write."""
    if output is None:
        if append:
            raise InputError("--append needs --output FILE: the file to add the samples to")
        return None
    if output.suffix.lower() not in YAML_SUFFIXES:
        raise InputError(f"{output}: drafted samples are written as YAML; name a .yaml or .yml file")
    if not output.exists():
        if append:
            raise InputError(f"{output}: --append adds to a file that exists, and there is none; leave --append out to create it")
        return None
    if not append:
        raise InputError(f"{output}: already exists; add --append to add the samples at its end, or choose another --output")
    from omk.loader import load_samples
    from omk.loader.read import read_text

    loaded = load_samples([output])
    text = read_text(output)
    return _Existing(loaded.samples, text, _item_indent(text, output))


def _item_indent(text: str, output: Path) -> int:
    """The indentation of the `samples:` list's items, which must end the file (so an item
    written at its end joins it)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"^samples\s*:\s*(#.*)?$", line)), None)
    if start is None and lines and not any(ITEM.match(line) and not line.startswith(" ") for line in lines):
        raise InputError(f"{output}: cannot append to it: it has no block-style `samples:` list (write to a new --output)")
    body = lines[(start + 1) if start is not None else 0 :]
    for line in body:
        if line.strip() and not line.lstrip().startswith("#") and not line.startswith((" ", "-")):
            raise InputError(f"{output}: cannot append to it: `samples:` is not its last top-level key (write to a new --output)")
    items = [m.group(1) for line in body if (m := ITEM.match(line))]
    return len(items[0]) if items else 2


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _header(skill: SkillSource, spec: str, count: int) -> list[str]:
    return [
        _one_line(f"# Samples drafted by a model ({spec}) from the skill {skill.name} (omk sample {skill.folder})."),
        "# Nothing here is trusted yet: review each sample (its prompt, mocks, rubric and checks) before relying on it.",
        "samples:" if count else "samples: []",
    ]


def generate(options: GenerateOptions) -> Generated:
    """Draft, check and lay out the samples; InputError (exit 2) for bad input, ConfigError for a
    target that cannot run. A model that fails is in `drafted.failures`, not an exception."""
    from omk.authoring.asker import TargetAsker

    skill = read_skill(options.skill_dir)
    existing = _existing(options.output, options.append)
    base_dir = (options.output.parent if options.output else options.cwd).resolve()
    asker = TargetAsker.open(options.spec, options.cwd, timeout=options.timeout, retries=options.retries)
    lang = options.lang or asker.lang
    spec = public_spec(asker.spec, asker.mask)
    job = DraftJob(skill, options.counts, spec, base_dir, existing.samples if existing else [], options.concurrency, existing.indent if existing else 2, lang)

    async def run() -> Drafted:
        try:
            return await draft_samples(job, asker)
        finally:
            await asker.close()

    drafted = asyncio.run(run())
    if existing is None:
        text = "\n".join([*_header(skill, spec, drafted.count), *drafted.blocks]) + "\n" if drafted.count else ""
        if drafted.count:
            _verify(text, options, drafted.count)
    else:
        lead = "" if existing.text.endswith("\n") or not existing.text else "\n"
        note = " " * existing.indent + _one_line(f"# Drafted by {spec} from the skill {skill.name} (omk sample --append): review before trusting.")
        text = lead + "\n".join([note, *drafted.blocks]) + "\n" if drafted.count else ""
        if drafted.count:
            _verify(existing.text + text, options, len(existing.samples) + drafted.count, strict=False)
    return Generated(text, drafted, skill, spec, lang)


def _verify(text: str, options: GenerateOptions, expected: int, *, strict: bool = True) -> None:
    """The file as it will be is loaded again: any problem here is omk's own mistake, so it is
    said plainly, and nothing is written."""
    from omk.loader import load_text

    name = str(options.output or "the drafted samples")
    base = (options.output.parent if options.output else options.cwd).resolve()
    try:
        loaded = load_text(text, name=name, base_dir=base, strict=strict)
    except InputError as exc:
        raise InputError(f"{name}: the drafted samples would not load, so nothing was written: {exc.lines()[0]}") from None
    if len(loaded.samples) != expected:
        raise InputError(f"{name}: the drafted samples would not join the file's samples list, so nothing was written (write to a new --output)")
