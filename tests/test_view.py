"""`omk view`: the runs, a trend, two runs side by side and a sample's history, served on
127.0.0.1 and exported; read-only and confined to the run folders; checked in headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from omk.view.site import Site, serve

ROOT = Path(__file__).resolve().parent.parent
EVIL = "<script>window.__pwned=1</script>"


def _project(tmp_path: Path) -> Path:
    """Three samples; two recordings that differ on one of them (`b` passes, then fails)."""
    samples = [
        {"sample_id": "a", "prompt": "say hi", "assertions": [{"type": "contains", "value": "hi"}]},
        {"sample_id": "b", "prompt": "say yes", "assertions": [{"type": "contains", "value": "yes"}]},
        {"sample_id": EVIL, "prompt": "say ok", "assertions": [{"type": "contains", "value": "ok"}]},
    ]
    (tmp_path / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    for name, b in (("one.jsonl", "yes indeed"), ("two.jsonl", "no")):
        lines = [{"sample_id": "a", "output": "hi there"}, {"sample_id": "b", "output": b}, {"sample_id": EVIL, "output": "ok"}]
        (tmp_path / name).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return tmp_path


def _runs(tmp_path: Path) -> Path:
    """Two runs of the same samples and target (`replay:responses.jsonl`), its recording changed between them."""
    project = _project(tmp_path)
    for i, replay in enumerate(("one.jsonl", "two.jsonl")):
        (project / "responses.jsonl").write_text((project / replay).read_text(encoding="utf-8"), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "omk", "eval", "eval-samples.json", "--target", "replay:responses.jsonl", "--no-judge",
             "--no-cache", "--format", "json,html", "--out", f".omk/runs/r{i}"],
            cwd=project, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode in (0, 1), proc.stderr
    return project / ".omk" / "runs"


def test_the_list_the_comparison_and_the_history(tmp_path):
    site = Site([_runs(tmp_path)])
    assert [r.folder.name for r in site.runs] == ["r0", "r1"] and site.problems == []
    index = site.page("/")
    assert index is not None and index.count('<tr><td><a href="run-') == 2 and 'class="trend"' in index
    assert EVIL not in "".join(site.page(a) or "" for a in ("/", "/index.html"))
    first, second = site.runs
    compare = site.page(f"/compare-{first.key}--{second.key}.html")
    assert compare is not None and "pass to fail" in compare and "contains &#x27;yes&#x27;: pass → fail" in compare
    assert 'href="sample-b.html"' in compare and "1 changed" in compare
    history = site.page("/sample-b.html")
    assert history is not None and history.count('class="ok">passed') == 1 and history.count('class="bad">failed') == 1
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
        assert server.server_address[0] == "127.0.0.1" and found[0].startswith("http://127.0.0.1:")
        with urllib.request.urlopen(found[0]) as reply:
            assert reply.status == 200 and "default-src 'none'" in reply.headers["Content-Security-Policy"]
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
    proc = subprocess.run([sys.executable, "-m", "omk", "view", str(runs), "--export", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0 and "2 run(s)" in proc.stdout, proc.stderr
    names = sorted(p.name for p in (tmp_path / "site").iterdir())
    assert "index.html" in names and "sample-b.html" in names and sum(n.startswith("run-") for n in names) == 2
    assert sum(n.startswith("compare-") for n in names) == 1


def test_a_folder_that_is_not_a_run_is_listed_as_not_read(tmp_path):
    runs = _runs(tmp_path)
    bad = runs / "broken"
    bad.mkdir()
    (bad / "report.json").write_text('{"format": "omk-report/1", "summary": {}, "results": [{"sample_id": 3}]}', encoding="utf-8")
    site = Site([runs])
    assert len(site.runs) == 2 and any("sample_id" in p for p in site.problems)
    assert site.page("/") is not None and 'id="unread"' in (site.page("/") or "")


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
        assert browser.js("window.__pwned === undefined") and browser.errors() == []
    finally:
        server.shutdown()


def test_the_commit_of_the_samples_is_recorded_and_listed(tmp_path):
    project = _project(tmp_path)
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-C", str(project)]
    for args in (["init", "-q"], ["add", "eval-samples.json"], ["commit", "-q", "-m", "samples"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    proc = subprocess.run(
        [sys.executable, "-m", "omk", "eval", "eval-samples.json", "--target", "replay:one.jsonl", "--no-judge", "--out", "run"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads((project / "run" / "run.json").read_text(encoding="utf-8"))["git"] == commit
    (run,) = Site([project / "run"]).runs
    assert run.commit == commit and f"<code>{commit[:10]}</code>" in (Site([project / "run"]).page("/") or "")
