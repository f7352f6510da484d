"""`omk view`: the pages of the run folders served on 127.0.0.1 (read-only: GET only, nothing
fetched from outside), or written as static files for a CI artifact.

An address names a page (`index.html`, `run-KEY.html`, `compare-A--B.html`, `sample-ID.html`),
never a file: runs are found when the view starts, and a page reads only those folders, so no
address (`../` included) can reach anything else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from omk.errors import InputError
from omk.view import pages
from omk.view.runs import RunEntry, find_runs


class Site:
    """The runs under some folders, and the page each address names (None: no such page)."""

    def __init__(self, roots: list[Path]):
        self.runs, self.problems = find_runs(roots)
        self.by_key = {r.key: r for r in self.runs}

    def page(self, address: str) -> str | None:
        name = unquote(address.split("?", 1)[0].lstrip("/")) or "index.html"
        if "/" in name or "\\" in name or ".." in name or not name.endswith(".html"):
            return None
        kind, _, rest = name[: -len(".html")].partition("-")
        if name == "index.html":
            return pages.index_page(self.runs, self.problems)
        if kind == "run" and (run := self.by_key.get(rest)) is not None:
            return self.run_page(run)
        if kind == "compare" and len(keys := rest.split("--")) == 2 and all(k in self.by_key for k in keys):
            return pages.compare_page(self.by_key[keys[0]], self.by_key[keys[1]])
        if kind == "sample" and rest:
            return pages.sample_page(rest, self.runs)
        return None

    def run_page(self, run: RunEntry) -> str:
        """The run's own report.html when it wrote one, else the same page made from report.json."""
        from omk.safe_files import read_run_file

        try:
            return read_run_file(run.folder / "report.html").decode("utf-8")
        except (OSError, UnicodeDecodeError):
            from omk.report.html_report import render_html

            return render_html(run.document)

    def addresses(self) -> Iterator[str]:
        """Every page an export writes: the list, each run, each run against the one before, and
        the samples those comparisons name."""
        yield "index.html"
        for run in self.runs:
            yield pages.link("run", run.key)
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


def export(site: Site, out: Path) -> list[Path]:
    """Write the site's pages into `out` as static files; the paths written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot write the pages: {exc.strerror or exc}") from None
    written = []
    for address in dict.fromkeys(site.addresses()):
        html = site.page(address)
        if html is not None:
            path = out / address
            path.write_text(html, encoding="utf-8")
            written.append(path)
    return written


def serve(site: Site, port: int = 0, ready: Callable[[str], None] | None = None) -> ThreadingHTTPServer:
    """Start serving on 127.0.0.1 (port 0: a free one) in a thread; `ready` gets the address."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(site))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    if ready is not None:
        ready(f"http://127.0.0.1:{server.server_address[1]}/")
    return server


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            html = site.page(self.path)
            body = (html or "<!DOCTYPE html><title>not found</title><p>No such page.</p>").encode("utf-8")
            self.send_response(200 if html is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if not self.path.startswith("/run-"):  # a run's own report.html carries its own policy
                self.send_header("Content-Security-Policy", pages.CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            self.send_error(405, "omk view is read-only")

        do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:  # quiet: the terminal keeps the address only
            return

    return Handler
