"""What counts as an English line in output meant to be Chinese (`--lang zh`).

A line is English when, after taking out what is not prose, two or more English words are left.
Not prose: text in backticks or quotes (sample content, commands), paths and URLs, flags
(`--repeat`), identifiers (a word with `_`, `-`, `.`, `=`, `@`, `/`, `:` or a digit in it), words
in capitals (verdict levels such as PROGRESS, units and acronyms such as CI, CV, MD5), the
sample ids, capabilities and variant names the run has, and the short allow-list below: names
that stay English in every language (the scoring layers' names in tables, omk's own name and its command `evolve`, statistics' names)."""

from __future__ import annotations

import re
from collections.abc import Iterable

ALLOWED = frozenset({
    "omk", "composite", "fact", "behavior", "judge", "wilson", "mcnemar", "cohen", "krippendorff", "kappa", "alpha",
    "vs", "n/a", "ms", "pass@k", "pass^k", "json", "html", "yaml", "md", "junit", "claude", "codex", "python",
    "replay", "cmd", "openai", "anthropic", "sonnet", "delta", "evolve",
})  # fmt: skip

QUOTED = re.compile(r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|“[^”]*”|‘[^’]*’")
TOKEN = re.compile(r"\S+")
WORD = re.compile(r"^[(\[{]*([A-Za-z]+)[)\]}.,;:!?]*$")


def english_words(line: str, names: Iterable[str] = ()) -> list[str]:
    """The English words of `line` that are prose (see the module text)."""
    known = {n.lower() for n in names}
    words = []
    for token in TOKEN.findall(QUOTED.sub(" ", line)):
        if token.lower().strip("()[]{}.,;:!?") in known:
            continue
        found = WORD.match(token)
        if found is None:  # a path, a flag, an identifier, a number, or not Latin letters at all
            continue
        word = found.group(1)
        if len(word) < 2 or word.isupper() or word.lower() in ALLOWED:
            continue
        words.append(word)
    return words


def without_content(line: str, content: Iterable[str]) -> str:
    """`line` without the starts of sample content it shows (a prompt cut to a turn label, the
    start of an output): the longest start of each text, of 8 characters or more, found in it."""
    for text in content:
        text = text.replace("\n", " ").strip()
        size = min(len(text), len(line))
        while size >= 8 and text[:size] not in line:
            size -= 1
        if size >= 8:
            line = line.replace(text[:size], " ")
    return line


def english_lines(text: str, names: Iterable[str] = (), content: Iterable[str] = ()) -> list[str]:
    """The lines of `text` with two or more English words of prose: `names` are words from the
    samples (ids, capabilities, variants), `content` their texts (prompts, outputs)."""
    names, content = list(names), [c for c in content if len(c.strip()) >= 8]
    found = []
    for line in text.splitlines():
        if len(english_words(line, names)) >= 2 and len(english_words(without_content(line, content), names)) >= 2:
            found.append(line)
    return found
