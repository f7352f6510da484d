"""Checks a target makes before the run, so a run that cannot work stops at once with one line
naming the target, the cause and the fix (exit 2), instead of failing every sample in turn.

What is checked here is what needs the network: the API's base URL (or the proxy in front of it)
accepts a TCP connection. The local checks (a key, the CLI, a script's path, its run bit) are made
where each target reads its settings.
"""

from __future__ import annotations

import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from omk.core.errors import ConfigError

CONNECT_SECONDS = 3.0


def proxy_for(url: str) -> str | None:
    """The proxy a client would use for `url` (HTTP(S)_PROXY, ALL_PROXY, less NO_PROXY), or None."""
    import urllib.request  # here, not at the top: it brings http.client and email with it

    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    bypass = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 - documented nowhere, so not in the type stubs
    if not proxies or bypass(parts.hostname or "", proxies):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def _connect(host: str, port: int, timeout: float) -> str | None:
    """None when a TCP connection opens, else what went wrong, in a few words."""
    found: list[str | None] = []

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            found.append(None)
        except ConnectionRefusedError:
            found.append("connection refused")
        except socket.gaierror:
            found.append(f"cannot resolve host {host}")
        except TimeoutError:
            found.append(f"no answer within {timeout:g}s")
        except OSError as exc:
            found.append(f"cannot connect: {exc.strerror or exc}")

    worker = threading.Thread(target=attempt, daemon=True)  # a name lookup has no timeout of its own
    worker.start()
    worker.join(timeout + 1)
    return found[0] if found else f"no answer within {timeout:g}s"


def check_reachable(spec: str, url: str, where: str, timeout: float = CONNECT_SECONDS) -> None:
    """ConfigError unless `url` (or its proxy) accepts a TCP connection; `where` names the
    setting the URL came from, for the fix."""
    proxy = proxy_for(url)
    dial = urlsplit(proxy if proxy else url)
    port = dial.port or (443 if dial.scheme == "https" else 80)
    problem = _connect(dial.hostname or "", port, timeout)
    if problem is None:
        return
    from omk.llm.http import public_url  # the HTTP client loads only to word this error

    if proxy:
        raise ConfigError(
            f"target {spec!r}: {problem}: proxy {public_url(proxy)} (for {public_url(url)}); "
            "check HTTPS_PROXY / HTTP_PROXY, or NO_PROXY for this host"
        )
    raise ConfigError(f"target {spec!r}: {problem}: {public_url(url)}; start the server there, or check {where}")


def preflight(target: Any) -> None:
    """Run the target's own `preflight()` if it has one (a target of a plugin may not)."""
    check = getattr(target, "preflight", None)
    if callable(check):
        check()
