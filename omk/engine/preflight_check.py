"""Whether a run will call its target at all, and the target's checks before the run only then.

A target's `preflight()` (omk/targets/preflight.py: the API it calls accepts a connection) is there
to stop a run that cannot work before it fails sample after sample. A run whose every job the
response cache answers makes no call, so it needs no check: it is skipped, and nothing is said.
When that cannot be known before the run (a sample whose URLs are inlined first, a sample that
checks a workspace, which is never cached, the cache turned off or not there yet), the check runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from omk.samples.model import Sample
from omk.targets.base import Target

if TYPE_CHECKING:
    from omk.inline.inliner import InlineSettings


def all_cached(target: Target, settings: InlineSettings, jobs: list[tuple[Sample, int]], cwd: Path) -> bool:
    """Every (sample, repeat) of `jobs` is in the response cache in `cwd`, as the run would look
    it up (omk/runner/sample_run.py, conversation.py)."""
    from omk.domain.compose import compose_prompt, compose_turn_prompt
    from omk.domain.workspace import checks_workspace
    from omk.inline.inliner import has_urls_to_inline
    from omk.store.cache import DEFAULT_PATH, cache_key, conversation_key, open_cache

    identity = target.cache_identity()
    path = cwd / DEFAULT_PATH
    samples = list({id(s): s for s, _ in jobs}.values())
    if not jobs or identity is None or not path.is_file() or has_urls_to_inline(samples, settings):
        return False
    if any(checks_workspace(s) for s in samples):
        return False
    cache = open_cache(path)
    if cache is None:
        return False
    try:
        keys = []
        for sample, repeat in jobs:
            if not sample.turns:
                keys.append(cache_key(identity, sample, compose_prompt(sample), repeat))
                continue
            prompts = [compose_turn_prompt(sample, i) for i in range(len(sample.turns))]
            turns = cache.get_turns(conversation_key(identity, sample, prompts, repeat))
            if turns is None or len(turns) != len(prompts):
                return False
        return cache.has_all(keys)  # the single-turn jobs' keys, looked up together
    finally:
        cache.close()


def check_before_run(target: Target, settings: InlineSettings, jobs: list[tuple[Sample, int]], cwd: Path, *, no_cache: bool) -> None:
    """The target's `preflight()` (ConfigError when it fails), unless no job will call the target."""
    from omk.targets.preflight import preflight

    if not callable(getattr(target, "preflight", None)):
        return
    if not no_cache and all_cached(target, settings, jobs, cwd):
        return  # answered from the cache: no call will be made
    preflight(target)
