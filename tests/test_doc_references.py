"""Every file or module a docstring or comment in omk/ names exists: a reader who follows
`(omk/records/document.py)` or `omk.records.rows` lands on it, and a moved module cannot leave a
pointer to where it used to be."""

from __future__ import annotations

import re
from pathlib import Path

import omk

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"(?<![\w/.])((?:omk|tests|docs|bench|samples)/[\w./-]*\w\.(?:py|md|json|yaml|js|css))")
MODULE = re.compile(r"(?<![\w/.-])(omk(?:\.[a-z_][a-z0-9_]*)+)")
# `omk.` followed by words that are not modules: the settings file, junit failure types, a
# reserved domain, the sample-set format's name
NOT_MODULES = {"yaml", "yml", "failed", "verdict", "invalid", "eval"}


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[1] in NOT_MODULES:
        return True
    for i in range(len(parts), 1, -1):
        here = ROOT.joinpath(*parts[:i])
        if here.with_suffix(".py").is_file() or (here / "__init__.py").is_file():
            return True
    return hasattr(omk, parts[1])  # a name the package exports (`omk.evaluate`, `omk.assertion_type`)


def test_every_file_and_module_named_in_omk_exists():
    missing = []
    for path in sorted((ROOT / "omk").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            missing += [f"{where}: {m}" for m in PATH.findall(line) if not (ROOT / m).exists()]
            missing += [f"{where}: {m}" for m in MODULE.findall(line) if not _resolves(m)]
    assert not missing, "names of files or modules that do not exist:\n" + "\n".join(missing)


def test_the_engines_module_map_names_its_modules_and_only_them():
    """omk/engine/__init__.py lists the engine's modules in backquotes: each one it names exists,
    and each module of the package is named."""
    init = (ROOT / "omk" / "engine" / "__init__.py").read_text(encoding="utf-8")
    doc = init.split('"""')[1].split("Module map:", 1)[1]
    named = set(re.findall(r"`([a-z_]+)`", doc))
    actual = {p.stem for p in (ROOT / "omk" / "engine").glob("*.py") if p.stem != "__init__"}
    assert named - actual == set(), f"named but not there: {sorted(named - actual)}"
    assert actual - named == set(), f"not named: {sorted(actual - named)}"
