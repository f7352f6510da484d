"""`omk view`: the pages of the run folders served on 127.0.0.1 (read-only: GET only, nothing
fetched from outside), or written as static files for a CI artifact.

An address names a page (`index.html`, `run-KEY.html`, `compare-A--B.html`, `sample-ID.html`,
`evolve-KEY.html` for an `omk evolve` output folder), never a file: runs are found when the view starts, and a page reads only those folders, so no
address (`../` included) can reach anything else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import cast
from urllib.parse import unquote

from omk.core.errors import InputError
from omk.view import pages
from omk.view.runs import EvolveEntry, RunEntry, find_evolve_runs, find_runs


class Site:
    """The runs under some folders, and the page each address names (None: no such page), its
    words in `lang`."""

    def __init__(self, roots: list[Path], lang: str = "en"):
        self.lang = lang
        self.runs, self.problems = find_runs(roots)
        self.by_name = {pages.page_name(r.key): r for r in self.runs}  # a run's page is named after its key
        self.evolve, unread = find_evolve_runs(roots)
        self.problems += unread
        self.evolve_by_name = {pages.page_name(e.key): e for e in self.evolve}

    def page(self, address: str) -> str | None:
        name = unquote(address.split("?", 1)[0].lstrip("/")) or "index.html"
        if "/" in name or "\\" in name or ".." in name or not name.endswith(".html"):
            return None
        kind, _, rest = name[: -len(".html")].partition("-")
        if name == "index.html":
            return pages.index_page(self.runs, self.problems, self.evolve, self.lang)
        if kind == "run" and (run := self.by_name.get(rest)) is not None:
            return self.run_page(run)
        if kind == "evolve" and (entry := self.evolve_by_name.get(rest)) is not None:
            return self.evolve_page(entry)
        if kind == "compare" and len(names := rest.split("--")) == 2 and all(n in self.by_name for n in names):
            return pages.compare_page(self.by_name[names[0]], self.by_name[names[1]], lang=self.lang)
        if kind == "sample" and rest:
            sample_id = pages.sample_id_named(rest, self.runs)
            return pages.sample_page(sample_id, self.runs, self.lang) if sample_id is not None else None
        return None

    def policy(self, address: str) -> str:
        """The Content-Security-Policy an address is served under: a run's report may run omk's
        own report scripts (allowed by hash), every other page no script at all."""
        name = unquote(address.split("?", 1)[0].lstrip("/"))
        if name.startswith("run-"):
            from omk.report.html_report import report_policy

            return report_policy()
        return pages.CSP

    def run_page(self, run: RunEntry) -> str:
        """The run's HTML report, made by the view from its report.json: the same page `omk eval
        --format html` writes, never the folder's own report.html (whose scripts and links are
        whatever its author put there)."""
        from omk.report.html_report import render_html

        return render_html(run.document, self.lang)

    def evolve_page(self, entry: EvolveEntry) -> str:
        """An evolve run's page, drawn by the view from its report.json (the same page `omk evolve`
        writes, never the folder's own report.html); it has no script and is served under the
        view's no-script policy."""
        from omk.evolve.html import page

        return page(entry.report, self.lang)

    def addresses(self) -> Iterator[str]:
        """Every page an export writes: the list, each run, each evolve run, each run against the
        one before, and the samples those comparisons name."""
        yield "index.html"
        for run in self.runs:
            yield pages.link("run", run.key)
        for entry in self.evolve:
            yield pages.link("evolve", entry.key)
        for i, run in enumerate(self.runs):
            earlier = [p for p in self.runs[:i] if p.suite == run.suite and p.target == run.target]
            if earlier:
                yield pages.link("compare", earlier[-1].key, run.key)
                yield from self._changed_samples(earlier[-1], run)

    def _changed_samples(self, a: RunEntry, b: RunEntry) -> Iterator[str]:
        from omk.engine.variant_records import records_of_report
        from omk.stats.diff import diff_runs

        for change in diff_runs(records_of_report(a.document), records_of_report(b.document)).changes:
            yield pages.link("sample", change.sample_id)


def export(site: Site, out: Path) -> tuple[list[Path], list[str]]:
    """Write the site's pages into `out` as static files: the paths written, and one line per
    page that could not be written (the export goes on past it)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot write the pages: {exc.strerror or exc}") from None
    written: list[Path] = []
    skipped: list[str] = []
    for address in dict.fromkeys(site.addresses()):
        name = unquote(address)
        html = site.page(address)
        if html is None:
            continue
        try:
            (out / name).write_text(html, encoding="utf-8")
        except OSError as exc:
            skipped.append(f"{name}: {exc.strerror or exc}")
            continue
        written.append(out / name)
    return written, skipped


def serve(site: Site, port: int = 0, ready: Callable[[str], None] | None = None) -> ThreadingHTTPServer:
    """Start serving on 127.0.0.1 (port 0: a free one) in a thread; `ready` gets the address."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(site))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    if ready is not None:
        ready(f"http://127.0.0.1:{server.server_address[1]}/")
    return server


ALLOWED_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        policy = pages.CSP  # what the response being written is served under

        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            if not self._host_allowed():
                self.send_error(421, "omk view answers only 127.0.0.1, localhost and [::1] on its own port")
                return
            try:
                html = site.page(self.path)
            except (InputError, OSError) as exc:  # a run folder changed since the view started
                self.send_error(500, "cannot read this page's run", str(exc)[:300])  # the reason phrase is latin-1
                return
            body = (html or f"<!DOCTYPE html><title>404</title><p>{pages.t('No such page.', site.lang)}</p>").encode("utf-8")
            self.policy = site.policy(self.path) if html is not None else pages.CSP
            self.send_response(200 if html is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _host_allowed(self) -> bool:
            """A DNS-rebinding page reaches the view under its own name: only the loopback names
            with the view's port are answered."""
            port = cast(ThreadingHTTPServer, self.server).server_port
            host = (self.headers.get("Host") or "").strip().lower()
            return host in {f"{name}:{port}" for name in ALLOWED_HOSTS}

        def end_headers(self) -> None:
            """Every response, errors included, carries the policy and the hardening headers."""
            self.send_header("Content-Security-Policy", self.policy + "; frame-ancestors 'none'")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("X-Frame-Options", "DENY")
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def do_POST(self) -> None:  # noqa: N802
            self.send_error(405, "omk view is read-only")

        do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_POST  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:  # quiet: the terminal keeps the address only
            return

    return Handler
