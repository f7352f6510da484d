"""YAML 1.2 core-schema resolution of scalars (what js-yaml, and so omk 0.54, does).

PyYAML resolves plain scalars by YAML 1.1 rules (`yes`/`no`/`on`/`off` become booleans, `0o17`
stays a string, `1_000` is an int, `2024-01-01` a date); the loader asks the parser for
untagged scalars and resolves them here instead. Quoted and block scalars are always strings.
"""

from __future__ import annotations

import math
import re
from typing import Any

_CONSTANTS: dict[str, Any] = {
    "": None,
    "~": None,
    "null": None,
    "Null": None,
    "NULL": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
    ".inf": math.inf,
    ".Inf": math.inf,
    ".INF": math.inf,
    "+.inf": math.inf,
    "+.Inf": math.inf,
    "+.INF": math.inf,
    "-.inf": -math.inf,
    "-.Inf": -math.inf,
    "-.INF": -math.inf,
    ".nan": math.nan,
    ".NaN": math.nan,
    ".NAN": math.nan,
}
_NUMBER_START = frozenset("0123456789+-.")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
MAP = "tag:yaml.org,2002:map"
SEQ = "tag:yaml.org,2002:seq"


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar under the YAML 1.2 core schema."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if text[0] not in _NUMBER_START:
        return text
    number = _number(text)
    return text if number is None else number


def _number(text: str) -> int | float | None:
    if len(text) > 4300:  # more digits than Python turns into an int: kept as the text it is
        return None
    if _INT10.fullmatch(text):
        return int(text)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    return None


class TagError(ValueError):
    pass


def resolve_tagged(tag: str, text: str) -> Any:
    """A scalar with an explicit standard tag (`!!str 12`, `!!int "7"`)."""
    if tag == STR:
        return text
    if tag == NULL:
        if text in ("", "~", "null", "Null", "NULL"):
            return None
    elif tag == BOOL:
        value = _CONSTANTS.get(text, 0)
        if isinstance(value, bool):
            return value
    elif tag == INT:
        value = _number(text) if text else None
        if isinstance(value, int):
            return value
    elif tag == FLOAT:
        value = _CONSTANTS.get(text)
        if isinstance(value, float):
            return value
        value = _number(text) if text else None
        if value is not None:
            return float(value)
    else:
        raise TagError(f"unsupported YAML tag {_short(tag)}")
    raise TagError(f"{text!r} is not a valid {_short(tag)} value")


def _short(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag
