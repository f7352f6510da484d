"""Type checking stays honest: every `# type: ignore` under omk/ names the errors it silences and
says why, e.g. `# type: ignore[union-attr]  # _WS matches the empty string too: never None`.
(mypy itself runs in .ci/run; with `warn_unused_ignores` it also rejects an ignore no longer needed.)"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

OMK = Path(__file__).resolve().parents[1] / "omk"

_IGNORE = re.compile(r"#\s*type:\s*ignore\b")
# the codes in brackets, then a comment of its own with the reason (a few words, not a mark)
_EXPLAINED = re.compile(r"#\s*type:\s*ignore\[[a-z][a-z-]*(?:,\s*[a-z][a-z-]*)*\]\s+#\s*(?P<reason>\S.*)$")
MIN_REASON = 10  # characters


def unexplained_ignores(source: str) -> list[tuple[int, str]]:
    """(line, comment) of each `# type: ignore` comment without its codes or a reason."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT or not _IGNORE.search(tok.string):
            continue
        match = _EXPLAINED.search(tok.string)
        if match is None or len(match["reason"].strip()) < MIN_REASON:
            found.append((tok.start[0], tok.string))
    return found


def test_the_check_tells_an_explained_ignore_from_one_that_is_not():
    good = "x = f()  # type: ignore[union-attr, arg-type]  # the pattern matches the empty string\n"
    assert unexplained_ignores(good) == []
    for bad in (
        "x = f()  # type: ignore\n",
        "x = f()  # type: ignore[union-attr]\n",
        "x = f()  # type: ignore  # no code given, only a reason\n",
        "x = f()  # type: ignore[union-attr]  # why\n",
        "x = f()  # noqa: E501  # type: ignore[misc]\n",
    ):
        assert unexplained_ignores(bad) == [(1, bad.split("  ", 1)[1].strip())], bad
    assert unexplained_ignores('text = "# type: ignore"\n') == []  # inside a string: not a comment


def test_every_type_ignore_under_omk_names_its_codes_and_says_why():
    problems = [
        f"{path.relative_to(OMK.parent)}:{line}: {comment}"
        for path in sorted(OMK.rglob("*.py"))
        for line, comment in unexplained_ignores(path.read_text(encoding="utf-8"))
    ]
    assert problems == [], "write `# type: ignore[code]  # reason`:\n" + "\n".join(problems)
