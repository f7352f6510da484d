"""`omk view`: the runs, a trend, two runs side by side and a sample's history, served on
127.0.0.1 and exported; read-only and confined to the run folders; checked in headless Chromium."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cli_support import run_omk
from view_support import EVIL
from view_support import project as _project
from view_support import runs as _runs

from omk.view.site import Site, serve

ROOT = Path(__file__).resolve().parent.parent


def test_the_list_the_comparison_and_the_history(tmp_path):
    site = Site([_runs(tmp_path)])
    assert [r.folder.name for r in site.runs] == ["r0", "r1"]
    assert site.problems == []
    index = site.page("/")
    assert index is not None
    assert index.count('<tr><td><a href="run-') == 2
    assert 'class="trend"' in index
    assert EVIL not in "".join(site.page(a) or "" for a in ("/", "/index.html"))
    first, second = site.runs
    compare = site.page(f"/compare-{first.key}--{second.key}.html")
    assert compare is not None
    assert "pass to fail" in compare
    assert "contains &#x27;yes&#x27;: pass → fail" in compare
    assert 'href="sample-b.html"' in compare
    assert "1 changed" in compare
    history = site.page("/sample-b.html")
    assert history is not None
    assert history.count('class="ok">passed') == 1
    assert history.count('class="bad">failed') == 1
    run_page = site.page(f"/run-{second.key}.html")
    assert run_page == (second.folder / "report.html").read_text(encoding="utf-8")  # the run's own report


def test_an_address_names_a_page_never_a_file(tmp_path):
    site = Site([_runs(tmp_path)])
    (tmp_path / "secret.html").write_text("secret", encoding="utf-8")
    for address in ("/../secret.html", "/run-..%2F..%2Fsecret.html", "/%2e%2e/secret.html", "/run-nope.html", "/report.json",
                    "/compare-a.html", "/sample-.html", "/etc/passwd"):  # fmt: skip
        assert site.page(address) is None, address


def test_the_server_binds_loopback_and_writes_nothing(tmp_path):
    site = Site([_runs(tmp_path)])
    found: list[str] = []
    server = serve(site, 0, found.append)
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert found[0].startswith("http://127.0.0.1:")
        with urllib.request.urlopen(found[0]) as reply:
            assert reply.status == 200
            assert "default-src 'none'" in reply.headers["Content-Security-Policy"]
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(found[0] + "..%2Fsecret.html")
        assert missing.value.code == 404
        with pytest.raises(urllib.error.HTTPError) as posted:
            urllib.request.urlopen(urllib.request.Request(found[0], data=b"x", method="POST"))
        assert posted.value.code == 405
    finally:
        server.shutdown()


def test_export_writes_the_pages_a_ci_artifact_needs(tmp_path):
    runs = _runs(tmp_path)
    proc = run_omk(
        "view", str(runs), "--export", str(tmp_path / "site"),
        drop=(), columns=None, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and "2 run(s)" in proc.stdout, proc.stderr
    names = sorted(p.name for p in (tmp_path / "site").iterdir())
    assert "index.html" in names
    assert "sample-b.html" in names
    assert sum(n.startswith("run-") for n in names) == 2
    assert sum(n.startswith("compare-") for n in names) == 1


def test_a_folder_that_is_not_a_run_is_listed_as_not_read(tmp_path):
    runs = _runs(tmp_path)
    bad = runs / "broken"
    bad.mkdir()
    (bad / "report.json").write_text('{"format": "omk-report/1", "summary": {}, "results": [{"sample_id": 3}]}', encoding="utf-8")
    site = Site([runs])
    assert len(site.runs) == 2
    assert any("sample_id" in p for p in site.problems)
    assert site.page("/") is not None
    assert 'id="unread"' in (site.page("/") or "")


def test_the_pages_in_a_browser(tmp_path, browser):
    from cdp_pipe import Page

    site = Site([_runs(tmp_path)])
    urls: list[str] = []
    server = serve(site, 0, urls.append)
    browser = Page(browser)
    try:
        browser.goto(urls[0])
        assert browser.js("document.querySelectorAll('#runs tr').length") == 3
        assert browser.js("document.querySelectorAll('svg polyline.composite').length") == 1
        assert browser.js("window.__pwned === undefined")
        first, second = site.runs
        browser.goto(urls[0] + f"compare-{first.key}--{second.key}.html")
        assert "pass to fail" in browser.js("document.querySelector('#changes').innerText")
        browser.goto(urls[0] + "sample-b.html")
        assert browser.js("document.querySelectorAll('#history tr').length") == 3
        browser.goto(urls[0] + f"run-{second.key}.html")
        assert browser.js("document.title").startswith("omk")
        assert browser.js("window.__pwned === undefined")
        assert browser.errors() == []
    finally:
        server.shutdown()


def test_the_commit_of_the_samples_is_recorded_and_listed(tmp_path):
    project = _project(tmp_path)
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-C", str(project)]
    for args in (["init", "-q"], ["add", "eval-samples.json"], ["commit", "-q", "-m", "samples"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    proc = run_omk(
        "eval", "eval-samples.json", "--target", "replay:one.jsonl", "--no-judge", "--out", "run",
        cwd=project, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads((project / "run" / "run.json").read_text(encoding="utf-8"))["git"] == commit
    (run,) = Site([project / "run"]).runs
    assert run.commit == commit
    assert f"<code>{commit[:10]}</code>" in (Site([project / "run"]).page("/") or "")


# ---------------------------------------------------------------- a hostile run folder, a hostile page

HOSTILE_REPORT = (
    "<!DOCTYPE html><html><head><title>hostile</title></head><body><p id='own'>the folder's own page</p>"
    "<script>document.title = 'pwned'; window.__pwned = 1;</script></body></html>"
)


def _get(port: int, path: str, host: str) -> tuple[int, dict[str, str], bytes]:
    """One GET over a plain socket, with the Host header a DNS-rebinding page would send."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def test_a_run_folders_own_report_html_never_runs_its_script_in_the_viewer(tmp_path, browser):
    from cdp_pipe import Page

    runs = _runs(tmp_path)
    site = Site([runs])
    for run in site.runs:
        (run.folder / "report.html").write_text(HOSTILE_REPORT, encoding="utf-8")
    urls: list[str] = []
    server = serve(site, 0, urls.append)
    page = Page(browser)
    try:
        page.goto(urls[0] + pages_link("run", site.runs[1].key))
        assert page.js("window.__pwned === undefined")
        assert page.js("document.title") != "pwned"
        assert page.js("document.getElementById('own') === null")  # the page omk renders, not the folder's
        assert page.js("document.querySelectorAll('table tr').length") > 1
        assert page.errors() == []  # omk's own report script runs under the viewer's policy
    finally:
        server.shutdown()


def pages_link(kind: str, *parts: str) -> str:
    from omk.view.pages import link

    return link(kind, *parts)


def test_every_response_carries_the_policy_and_a_foreign_host_gets_nothing(tmp_path):
    site = Site([_runs(tmp_path)])
    server = serve(site, 0)
    port = server.server_address[1]
    run_page = "/" + pages_link("run", site.runs[0].key)
    try:
        for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", ""):
            status, headers, body = _get(port, "/", host)
            assert status == 421, host
            assert b"runs" not in body
            assert b"eval-samples" not in body
            assert "default-src 'none'" in headers["content-security-policy"]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
            status, headers, body = _get(port, "/", host)
            assert status == 200 and b'id="runs"' in body, host
        for path in ("/", run_page, "/nope.html", "/../etc/passwd"):
            status, headers, _ = _get(port, path, f"127.0.0.1:{port}")
            policy = headers["content-security-policy"]
            assert policy.startswith("default-src 'none'"), path
            directives = {d.split(" ", 1)[0]: d for d in policy.split("; ")}
            assert "frame-ancestors 'none'" in policy
            assert "'unsafe-inline'" not in directives.get("script-src", "")
            assert headers["x-content-type-options"] == "nosniff"
            assert headers["referrer-policy"] == "no-referrer"
        assert "script-src 'sha256-" in _get(port, run_page, f"127.0.0.1:{port}")[1]["content-security-policy"]
    finally:
        server.shutdown()


def test_run_folder_files_that_link_out_are_never_read_served_or_exported(tmp_path):
    runs = _runs(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE", encoding="utf-8")
    first, second = sorted(runs.iterdir())
    (first / "report.html").unlink()
    (first / "report.html").symlink_to(secret)
    (second / "run.json").unlink()
    (second / "run.json").symlink_to("/proc/self/environ")
    leaky = runs / "leaky"
    leaky.mkdir()
    (leaky / "report.json").symlink_to(second / "report.json")  # another folder's report: not this folder's own
    site = Site([runs])
    assert len(site.runs) == 2
    assert any("links outside its run folder" in p for p in site.problems)
    for run in site.runs:
        assert "TOP-SECRET-VALUE" not in (site.page("/" + pages_link("run", run.key)) or "")
    proc = run_omk(
        "view", str(runs), "--export", str(tmp_path / "site"),
        drop=(), columns=None, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "links outside its run folder" in proc.stderr
    assert "Traceback" not in proc.stderr
    exported = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").iterdir())
    assert "TOP-SECRET-VALUE" not in exported
    assert "PATH=" not in exported


def test_a_special_file_in_a_run_folder_never_hangs_the_view(tmp_path):
    import os

    runs = _runs(tmp_path)
    first = sorted(runs.iterdir())[0]
    (first / "run.json").unlink()
    os.mkfifo(first / "run.json")
    proc = run_omk(
        "view", str(runs), "--export", str(tmp_path / "site"),
        drop=(), columns=None, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and "2 run(s)" in proc.stdout, proc.stderr


LONG_IDS = ["审查这段代码的安全性并给出修复建议以及参数化查询的示例代码与说明文字内容", "审查这段代码的安全性并给出修复建议以及参数化查询的示例代码与说明文字内容二",
            "a/../b", "..", "x" * 300, "with space", "a--b", "a~b", "Case", "case"]  # fmt: skip


def test_an_export_of_long_and_odd_sample_ids_completes_with_a_page_each(tmp_path):
    samples = [{"sample_id": sid, "prompt": "p", "assertions": [{"type": "contains", "value": "yes"}]} for sid in LONG_IDS]
    (tmp_path / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    for i, answer in enumerate(("yes", "no")):
        lines = "".join(json.dumps({"sample_id": sid, "output": answer}) + "\n" for sid in LONG_IDS)
        (tmp_path / "responses.jsonl").write_text(lines, encoding="utf-8")
        proc = run_omk(
            "eval", "eval-samples.json", "--target", "replay:responses.jsonl", "--no-judge", "--no-cache", "--out", f".omk/runs/r{i}",
            cwd=tmp_path, drop=(), columns=None, timeout=120,
        )  # fmt: skip
        assert proc.returncode in (0, 1), proc.stderr
    out = tmp_path / "site"
    proc = run_omk(
        "view", ".omk/runs", "--export", str(out),
        cwd=tmp_path, drop=(), columns=None, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and "not written" not in proc.stderr, proc.stderr
    names = [p.name for p in out.iterdir()]
    assert all(len(n.encode("utf-8")) <= 200 and "/" not in n for n in names)
    assert len({n.lower() for n in names}) == len(names)  # no two pages share a file where case is not told apart
    sample_pages = [n for n in names if n.startswith("sample-")]
    assert len(sample_pages) == len(LONG_IDS)  # every id changed between the runs: one page each, none shared
    site = Site([tmp_path / ".omk" / "runs"])
    for sid in LONG_IDS:  # each page is found by its link, on disk and from the server's addresses
        link = pages_link("sample", sid)
        assert (out / urllib.request.url2pathname(link)).is_file(), sid
        assert sid.replace("&", "&amp;") in (site.page("/" + link) or ""), sid


def test_an_export_that_cannot_write_a_page_says_which_and_goes_on(tmp_path):
    runs = _runs(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    (out / "sample-b.html").mkdir()  # a folder where a page goes: that page cannot be written
    proc = run_omk("view", str(runs), "--export", str(out), drop=(), columns=None, timeout=60)  # fmt: skip
    assert proc.returncode == 3 and "not written: sample-b.html" in proc.stderr, proc.stderr
    assert (out / "index.html").is_file()
    assert "Traceback" not in proc.stderr
