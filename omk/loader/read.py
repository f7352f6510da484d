"""Read one samples file into a `Document`: decode it, then parse by extension.

`.yaml` / `.yml` are YAML (1.2 core schema), `.jsonl` is JSON Lines (one sample per line), and
everything else is JSON (as omk 0.54). Text must be UTF-8; a leading BOM is accepted.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from omk.loader.document import Document, ParseFailure
from omk.loader.json_lines import parse_json, parse_jsonl

YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIX = ".jsonl"

_OTHER_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def decode(raw: bytes) -> str:
    for bom, name in _OTHER_BOMS.items():  # UTF-32 first: its LE BOM starts like UTF-16's
        if raw.startswith(bom):
            raise ParseFailure(f"the file is {name} text; save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = raw[exc.start]
        raise ParseFailure(
            f"not valid UTF-8 text (byte 0x{byte:02x} at column {column}); save the file as UTF-8", line
        ) from None


def read_text(path: Path) -> str:
    from omk.safe_files import UnsafeFile, read_regular_bytes, sample_file_cap

    try:
        raw = read_regular_bytes(path, sample_file_cap())
    except UnsafeFile as exc:
        raise ParseFailure(f"cannot read the file: {exc.strerror}") from None
    except FileNotFoundError:
        raise ParseFailure("file not found") from None
    except IsADirectoryError:
        raise ParseFailure("is a directory, not a file") from None
    except OSError as exc:
        raise ParseFailure(f"cannot read the file: {exc.strerror or exc}") from None
    return decode(raw)


def parse_text(text: str, suffix: str) -> Document:
    suffix = suffix.lower()
    if suffix in YAML_SUFFIXES:
        from omk.loader.yaml_lines import parse_yaml  # PyYAML is imported only for YAML files

        return parse_yaml(text)
    if suffix == JSONL_SUFFIX:
        return parse_jsonl(text)
    return parse_json(text)


def read_file(path: Path) -> Document:
    """Raises `ParseFailure` for a file that cannot be read or parsed at all."""
    text = read_text(path)
    if not text.strip():
        raise ParseFailure('the file is empty; expected an array of samples or an object with a "samples" field')
    doc = parse_text(text, path.suffix)
    from omk.textsafe import SURROGATE_ESCAPE, scrub_value

    if SURROGATE_ESCAPE.search(text):  # "\ud800": a lone surrogate could not be written out later
        doc.data = scrub_value(doc.data)
    return doc
