"""The fields of the typed faces of the settings spec (omk.settings.spec), written from it:

    Settings        (omk/settings/config.py)         one run's settings after every source is read
    EvalOptions     (omk/engine/options.py)          what one invocation was given (None: not given)
    RunOptions      (omk/api.py)                     the Python API's keywords, a TypedDict
    TargetSettings  (omk/settings/target_settings.py)  what the targets read of Settings

Each class keeps its fields between two marker lines; `python -m omk.settings.faces` rewrites
them from `SETTINGS`, and tests/test_settings_spec.py fails, naming that command, when a file
differs from what the spec makes. The fields' types come from the spec too (`settings_type`,
`option_type`, `keyword_type`), so a setting is declared in one line.

Why written out, not made at run time: a class made at run time from a table (`make_dataclass`,
a functional TypedDict) is invisible to type checkers, so every use of a setting would be `Any`;
and `**options: Unpack[RunOptions]` needs a TypedDict that mypy can read. A mypy plugin could
make them, but it would tie omk to mypy's plugin interface and leave other type checkers and
editors blind. Written from the spec by a program, checked by a test, the faces are plain
typed code for every tool and still have one source.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import msgspec

from omk.settings import spec

ROOT = Path(__file__).resolve().parent.parent.parent
BEGIN = "# --- fields made from the settings spec by `python -m omk.settings.faces`: edit omk/settings/spec.py, not these lines ---"
END = "# --- end of the fields made from the settings spec ---"


def _types(setting: spec.Setting) -> list[str]:
    """The value's type(s) as written in a field (a list of texts; a number is float when it may be either)."""
    if setting.split or setting.combine == "add":
        return ["list[str]"]
    names = {int: "int", float: "float", str: "str", bool: "bool", list: "list[str]", dict: "dict[str, Any]"}
    return [names[t] for t in setting.type if not (t is int and float in setting.type)]


def settings_type(setting: spec.Setting) -> str:
    """Settings' type for a setting: its value's type, or None besides when its default is None."""
    if setting.opposite or setting.clears is not None:
        return "bool"
    return " | ".join([*_types(setting), *(["None"] if setting.default is None else [])])


def option_type(setting: spec.Setting) -> str:
    """EvalOptions' type for a flag: what argparse makes of it, None when not given."""
    flag = setting.flag
    assert flag is not None
    if flag.annotation:
        return flag.annotation
    if flag.action == "store_true":
        return "bool"
    if flag.action is argparse.BooleanOptionalAction:
        return "bool | None"
    if flag.action == "append" or flag.nargs is not None:
        return "list[str] | None"
    if setting.number is not None:
        return ("int" if setting.number.whole else "float") + " | None"
    return "str | None"


def keyword_type(setting: spec.Setting) -> str:
    """RunOptions' type for an API keyword: the spec's own, else made from the value's type."""
    api = setting.api
    assert api is not None
    if api.annotation:
        return api.annotation
    if setting.type == (bool,):
        return "bool"
    if setting.split or list in setting.type:
        return "Sequence[str] | None"
    if setting.number is not None:
        return ("int" if setting.number.whole else "float") + " | None"
    return " | ".join([*_types(setting), "None"])


def _default(value: object) -> str:
    """A default as the code is written (texts in double quotes)."""
    if isinstance(value, list):
        return f"field(default_factory=lambda: {json.dumps(value)})" if value else "field(default_factory=list)"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def settings_fields(settings: tuple[spec.Setting, ...]) -> list[str]:
    return [f"{s.field}: {settings_type(s)} = {_default(s.field_default())}" for s in settings if s.field is not None]


def option_fields(settings: tuple[spec.Setting, ...]) -> list[str]:
    return [f"{s.name}: {option_type(s)} = {'False' if option_type(s) == 'bool' else 'None'}" for s in settings if s.flag is not None]


def keyword_fields(settings: tuple[spec.Setting, ...]) -> list[str]:
    return [f"{s.api.keyword}: {keyword_type(s)}" for s in settings if s.api is not None]


def target_fields(settings: tuple[spec.Setting, ...]) -> list[str]:
    return settings_fields(tuple(s for s in settings if s.targets))


class Face(msgspec.Struct, frozen=True):
    path: str  # from the repository's root
    cls: str  # the class whose fields these are

    def lines(self, settings: tuple[spec.Setting, ...]) -> list[str]:
        made = {"Settings": settings_fields, "EvalOptions": option_fields, "RunOptions": keyword_fields, "TargetSettings": target_fields}[self.cls]
        return made(settings)

    def render(self, text: str, settings: tuple[spec.Setting, ...]) -> str:
        """`text` (the file) with the lines between the class's markers made from `settings`."""
        start = re.search(rf"^class {self.cls}\b", text, re.M).start()  # type: ignore[union-attr]  # each face's file has its class
        begin = text.index(BEGIN, start)
        end = text.index(END, begin)
        indent = text[text.rindex("\n", 0, begin) + 1 : begin]
        body = "".join(f"{indent}{line}\n" for line in self.lines(settings))
        return text[: begin + len(BEGIN)] + "\n" + body + indent + text[end:]


FACES = (
    Face("omk/settings/config.py", "Settings"),
    Face("omk/engine/options.py", "EvalOptions"),
    Face("omk/api.py", "RunOptions"),
    Face("omk/settings/target_settings.py", "TargetSettings"),
)


def stale(root: Path = ROOT, settings: tuple[spec.Setting, ...] | None = None) -> list[str]:
    """The files whose fields differ from what the spec makes."""
    chosen = spec.SETTINGS if settings is None else settings
    out = []
    for face in FACES:
        text = (root / face.path).read_text(encoding="utf-8")
        if face.render(text, chosen) != text:
            out.append(face.path)
    return out


def write(root: Path = ROOT) -> list[str]:
    """Rewrite the faces' fields from the spec; the files changed."""
    changed = stale(root)
    for face in FACES:
        path = root / face.path
        path.write_text(face.render(path.read_text(encoding="utf-8"), spec.SETTINGS), encoding="utf-8")
    return changed


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    for name in write(root):
        print(f"rewrote the fields in {name}")
