"""What a target's answer depends on besides the sample: its cache identity.

The response cache keys an answer by the sample and by this record (omk.store.cache). Every target kind
builds one in its `cache_identity`, and every field is required, so a kind cannot leave one out by
forgetting it: the model, the endpoint its calls go to, the program that answers, the environment
variables that reach what answers, and its settings. Two runs whose identities differ in anything
never share an answer: a run against a scripted model server and a run against the real API (or a
proxy) are two targets.

The record is hashed into the key and never stored. Secrets still never enter it in clear: a
variable named like a secret (omk.core.secrets) is recorded as `set`, a URL loses its `user:password@`
part, and any known secret inside another value is masked.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from omk.io.safe_files import file_sha256

if TYPE_CHECKING:
    from omk.core.secrets import Masker

# The proxy variables every HTTP client omk starts or calls through reads, in any case.
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
# Variables that pick where a program's model calls go or which model answers, whatever the
# program: `*_BASE_URL`, `*_API_BASE`, `*_ENDPOINT`, `*_MODEL` (`OPENAI_BASE_URL`, `LLM_MODEL`…).
ROUTING = re.compile(r"(?:^|_)(?:BASE_URL|API_BASE|API_URL|ENDPOINT|MODEL)$", re.I)
# Variables passed to a CLI that only reach this machine, never the model: left out of the key.
LOCAL_ONLY = frozenset({"PATH", "TERM", "TMPDIR"})
SET = "set"


class CacheIdentity(msgspec.Struct, frozen=True, gc=False):
    """Everything besides the sample that decides what a target answers."""

    kind: str
    model: str | None
    endpoint: str | None  # where the calls go, no credentials; None: the program decides (cmd:) or a cloud SDK does
    program: Mapping[str, Any] | None  # what runs: a CLI's path and version, a command and its files' digests
    environment: Mapping[str, str]  # the variables that reach what answers (see `environment`)
    settings: Mapping[str, Any]  # the rest: omk.yaml's block for the kind, params, system text, skills, max_turns…

    def material(self) -> dict[str, Any]:
        """The record as the cache key hashes it."""
        return msgspec.structs.asdict(self)


def without_credentials(url: str) -> str:
    """`url` without a `user:password@` part (marked as `@` so a URL with credentials still
    differs from one without)."""
    try:
        parts = urlsplit(url)
        if parts.username is None and parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"@{host}:{parts.port}" if parts.port else f"@{host}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:  # not a URL after all (a bad port): the text as it is, masked by the caller
        return url


def environment(names: Iterable[str], mask: Masker | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The value of each named variable that is set, as the cache key may hold it: a variable
    named like a secret (`OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`) as `set`, a URL without its
    credentials, and any known secret inside another value masked."""
    from omk.core.secrets import secret_env_names

    env = os.environ if environ is None else environ
    present = {n: env[n] for n in names if n in env and n not in LOCAL_ONLY}
    secret = set(secret_env_names(present))
    out = {}
    for name in sorted(present):
        value = present[name]
        if name in secret:
            out[name] = SET
            continue
        value = without_credentials(value) if "@" in value else value
        out[name] = mask(value) if mask is not None else value
    return out


def selected(*, routing: bool, environ: Mapping[str, str] | None = None) -> list[str]:
    """The names of the set proxy variables and, with `routing`, of the routing ones (`ROUTING`):
    what reaches a program that inherits omk's whole environment and picks its model from it."""
    env = os.environ if environ is None else environ
    return [n for n in env if n.lower() in PROXY_VARIABLES or (routing and ROUTING.search(n))]


def source_digest(files: Iterable[str]) -> str:
    """sha256 of omk's version and the bytes of `files` (omk's own modules that write a CLI's
    settings, hooks and flags): a change to what omk hands a CLI is a new target. A file that
    cannot be read counts by its name alone."""
    import hashlib

    from omk.version import __version__

    digest = hashlib.sha256(__version__.encode("utf-8"))
    for name in sorted(set(files)):
        digest.update(b"\0" + name.rsplit(os.sep, 1)[-1].encode("utf-8", "surrogatepass") + b"\0")
        try:
            with open(name, "rb") as f:
                digest.update(f.read())
        except OSError:
            continue
    return digest.hexdigest()


def command_files(argv: Iterable[str], base: str | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The sha256 of every file a command line names (absolute, or relative to `base` when
    given), and of the module a `-m MODULE` runs (found, without importing anything, in `base` or
    the current folder and then `PYTHONPATH`): editing the program or its script is a new target."""
    tokens = list(argv)
    found: dict[str, str] = {}
    for token in tokens:
        path = token if os.path.isabs(token) or base is None else os.path.join(base, token)
        if os.path.isabs(path) and os.path.isfile(path):
            _add_digest(found, token, path)
    for flag, name in zip(tokens, tokens[1:], strict=False):
        if flag == "-m" and (module := _module_file(name, base, environ)) is not None:
            _add_digest(found, f"-m {name}", module)
    return found


def _add_digest(found: dict[str, str], key: str, path: str) -> None:
    with contextlib.suppress(OSError):  # by the file rules: never /proc, a FIFO or a device, read in pieces, capped
        found[key] = file_sha256(Path(path))


def _module_file(name: str, base: str | None, environ: Mapping[str, str] | None) -> str | None:
    """The file `python -m NAME` would run from the folders a project's own module lives in (its
    `.py` file or its package's `__main__.py`); None for an installed module or no such file."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    paths = (os.environ if environ is None else environ).get("PYTHONPATH", "")
    for folder in [base or os.getcwd(), *filter(None, paths.split(os.pathsep))]:
        stem = os.path.join(folder, *parts)
        for candidate in (stem + ".py", os.path.join(stem, "__main__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None
