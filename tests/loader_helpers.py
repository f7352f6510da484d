"""Write a samples file and load it; get the problem lines or the samples back."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from omk.core.errors import InputError
from omk.loader import LoadedSamples, load_samples


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems(folder: Path, name: str, text: str | bytes) -> list[str]:
    """The rendered problem lines, with the folder stripped so tests read `s.yaml:3: ...`."""
    path = write(folder, name, text)
    with pytest.raises(InputError) as info:
        load_samples([path])
    return [line.replace(f"{folder}/", "") for line in info.value.lines()]


def load(folder: Path, name: str, text: str | bytes) -> LoadedSamples:
    return load_samples([write(folder, name, text)])


def one_problem(folder: Path, text: str, name: str = "s.yaml") -> str:
    found = problems(folder, name, text)
    assert len(found) == 1, found
    return found[0]
