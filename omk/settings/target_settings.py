"""What a target reads of a run's settings, typed: `TargetSettings`.

The targets, the judge's model clients, URL inlining and the secret masker read the provider
blocks (`openai:`, `claude:`…, as omk.yaml gives them, paths made absolute from its folder),
`system`, `skill`/`skills`, `mcp_config` and the caps. `Settings.blocks()` (omk.settings.config)
hands them over as this record; its fields are written from the settings spec (each setting whose
spec line says `targets=True`) by omk.settings.faces.

It is also a read-only mapping of the settings given (None left out), by name: a target kind added
with `omk.targets.register_target` that reads `settings.get("openai")` keeps working. That is why
it is a frozen dataclass and not a msgspec struct, as omk's other frozen values are: a struct
cannot be a `collections.abc.Mapping` (their metaclasses conflict).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class TargetSettings(Mapping[str, Any]):
    """The settings a target reads: the provider blocks, the system prompt or skill(s), URL
    inlining's servers and caps, the tool loop's turns and the output cap (None: not set)."""

    # --- fields made from the settings spec by `python -m omk.settings.faces`: edit omk/settings/spec.py, not these lines ---
    mcp_config: str | None = None
    system: str | None = None
    skill: str | list[str] | None = None
    skills: str | list[str] | None = None
    url_timeout: float | None = None
    url_max_bytes: int | None = None
    max_output_bytes: int | None = None
    max_turns: int | None = None
    openai: dict[str, Any] | None = None
    anthropic: dict[str, Any] | None = None
    claude: dict[str, Any] | None = None
    codex: dict[str, Any] | None = None
    cmd: dict[str, Any] | None = None
    # --- end of the fields made from the settings spec ---

    @classmethod
    def of(cls, given: Mapping[str, Any] | None) -> TargetSettings:
        """From a mapping of settings by name (a caller's dict); names that are no field are left out."""
        if isinstance(given, TargetSettings):
            return given
        return cls(**{name: value for name, value in (given or {}).items() if name in _KNOWN})

    def __getitem__(self, name: str) -> Any:
        value = getattr(self, name) if name in _KNOWN else None
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in NAMES if getattr(self, name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


NAMES = tuple(f.name for f in fields(TargetSettings))  # in the spec's order
_KNOWN = frozenset(NAMES)
