"""A reply that unpacks to far more than its cap (a gzip bomb, stacked encodings) fails at the cap
as it is unpacked, for every HTTP reader: URL inlining, model targets (direct and through a
proxy) and the judge. A real server on 127.0.0.1 sends the compressed bytes; the memory omk
allocates meanwhile (tracemalloc's peak, or the child's peak RSS for `omk eval`) is held to a
bound that the whole unpacked body would break."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import threading
import tracemalloc
import zlib
from collections.abc import Callable
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from omk.inline.fetched import Fetched, FetchFailure
from omk.inline.http_fetch import HttpFetcher
from omk.inline.policy import build_policy
from omk.io.content_encoding import MAX_ENCODINGS, BodyReader, BodyTooLarge
from omk.samples.model import Sample
from omk.targets import make_target
from omk.targets.base import TargetError
from omk.testing.openai_chat import text_reply

MB = 1024 * 1024
CAP = MB
BOMB_MB = 200  # unpacked size: far over every bound asserted below
PEAK_BOUND = 12 * MB  # the cap, a few pieces in flight, and the test's own allocations
DOC = ("The exporter writes CSV and JSON. Rows are capped at ten thousand per export. " * 40).encode()


@cache
def zeros_gzip(megabytes: int) -> bytes:
    """`megabytes` MB of zero bytes, gzip-compressed without holding them (about 1000:1)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(MB)
    return b"".join([*(packer.compress(block) for _ in range(megabytes)), packer.flush()])


def stacked_bomb() -> bytes:
    """`Content-Encoding: gzip, gzip`: a few hundred bytes that unpack to BOMB_MB MB."""
    return gzip.compress(zeros_gzip(BOMB_MB))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        body, encoding, ctype = self.server.reply  # type: ignore[attr-defined]
        self.server.seen.append((self.path, self.headers.get("accept-encoding")))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        if encoding:
            self.send_header("content-encoding", encoding)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


class EncodedServer:
    """Answers every GET and POST, any path (a proxy's absolute form too), with one reply."""

    def __init__(self, body: bytes, encoding: str | None, ctype: str = "application/json"):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.reply = (body, encoding, ctype)  # type: ignore[attr-defined]
        self._httpd.seen = []  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def seen(self) -> list[tuple[str, str | None]]:
        return list(self._httpd.seen)  # type: ignore[attr-defined]

    def __enter__(self) -> EncodedServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def peak_of(work: Callable[[], Any]) -> tuple[Any, int]:
    """What `work()` returns, and the most memory Python held at once meanwhile."""
    tracemalloc.start()
    try:
        return work(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                 "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def fetch(url: str, max_bytes: int = CAP) -> Fetched | FetchFailure:
    async def go():
        fetcher = HttpFetcher(max_bytes=max_bytes, policy=build_policy(["127.0.0.1"]))
        try:
            return await fetcher.fetch(url)
        finally:
            await fetcher.aclose()

    return asyncio.run(go())


# --- URL inlining ---------------------------------------------------------------------------


def test_a_stacked_gzip_bomb_in_url_inlining_stops_at_the_cap():
    bomb = stacked_bomb()
    assert len(bomb) < 2048
    with EncodedServer(bomb, "gzip, gzip", "text/plain") as server:
        got, peak = peak_of(lambda: fetch(server.url + "/doc"))
    assert isinstance(got, FetchFailure)
    assert got.reason == "larger than the 1 MB size cap"
    assert peak < PEAK_BOUND, f"{peak / MB:.0f} MB held while unpacking a {BOMB_MB} MB bomb"


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("gzip, gzip", lambda b: gzip.compress(gzip.compress(b))),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b, wbits=-15)),  # raw deflate, as some servers send it
        ("identity", lambda b: b),
    ],
)
def test_a_compressed_page_under_the_cap_is_inlined_as_before(encoding, pack):
    with EncodedServer(pack(DOC), encoding, "text/plain") as server:
        got = fetch(server.url + "/doc")
        announced = server.seen[0][1]
    assert isinstance(got, Fetched)
    assert got.content == DOC.decode().strip()
    assert announced is not None
    assert set(announced.split(", ")) <= {"gzip", "deflate", "br"}


def test_more_stacked_encodings_than_omk_undoes_is_a_clear_failure():
    packed = DOC
    for _ in range(MAX_ENCODINGS + 1):
        packed = gzip.compress(packed)
    encoding = ", ".join(["gzip"] * (MAX_ENCODINGS + 1))
    with EncodedServer(packed, encoding, "text/plain") as server:
        got = fetch(server.url + "/doc")
    assert isinstance(got, FetchFailure)
    assert got.reason.startswith(f"{MAX_ENCODINGS + 1} stacked content encodings")


def test_a_corrupt_gzip_body_is_a_clear_failure():
    with EncodedServer(b"\x1f\x8b\x08\x00garbage-not-gzip" * 10, "gzip", "text/plain") as server:
        got = fetch(server.url + "/doc")
    assert isinstance(got, FetchFailure)
    assert got.reason.startswith("cannot decode the body (Content-Encoding gzip)")


def test_every_layer_is_held_to_the_cap_not_only_the_last():
    """A layer's output is counted before the next layer sees it: an outer layer that unpacks to
    megabytes of empty deflate blocks (no final output at all) is stopped too."""
    empty_block, last_block = b"\x00\x00\x00\xff\xff", b"\x01\x00\x00\xff\xff"  # stored, no bytes
    inner = empty_block * 400_000 + last_block  # 2 MB of raw deflate that unpacks to nothing
    reader = BodyReader("deflate, gzip", CAP)
    with pytest.raises(BodyTooLarge):
        reader.feed(gzip.compress(inner))
    assert reader.size == 0


# --- model targets and the judge ------------------------------------------------------------


def target_call(base_url: str) -> Any:
    async def go():
        target = make_target("openai:m", settings={"openai": {"base_url": base_url + "/v1", "max_reply_bytes": CAP}})
        try:
            return await target.run(Sample("s", "hi"), "hi")
        finally:
            await target.close()

    return asyncio.run(go())


@pytest.mark.parametrize("path", ["direct", "proxy"])
def test_a_gzip_bomb_from_a_model_api_fails_the_call_at_max_reply_bytes(path, monkeypatch):
    bomb = zeros_gzip(BOMB_MB)  # about 200 KB: under the cap as sent
    assert len(bomb) < CAP
    with EncodedServer(bomb, "gzip") as server:
        base = server.url
        if path == "proxy":  # the calls go through httpx clients to the proxy, which answers itself
            monkeypatch.setenv("HTTP_PROXY", server.url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # the host is not local
            base = "http://models.example.test"

        def call() -> BaseException | None:
            try:
                target_call(base)
            except TargetError as exc:
                return exc
            return None

        error, peak = peak_of(call)
        requests = server.seen
    assert error is not None
    assert f"over the {CAP}-byte cap (max_reply_bytes in omk.yaml)" in str(error)
    assert peak < PEAK_BOUND, f"{peak / MB:.0f} MB held while unpacking a {BOMB_MB} MB reply"
    assert requests
    assert requests[0][1] == "gzip, deflate"  # only what omk undoes is asked for


@pytest.mark.parametrize("path", ["direct", "proxy"])
def test_a_compressed_model_reply_under_the_cap_is_read(path, monkeypatch):
    reply = gzip.compress(json.dumps(text_reply("squeezed twice")).encode())
    with EncodedServer(gzip.compress(reply), "gzip, gzip") as server:
        base = server.url
        if path == "proxy":
            monkeypatch.setenv("HTTP_PROXY", server.url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # the host is not local
            base = "http://models.example.test"
        assert target_call(base).output == "squeezed twice"


def test_a_gzip_bomb_from_the_judge_api_is_a_judge_error_at_its_cap():
    from judge_support import graded, sample

    from omk.judge.clients import make_client
    from omk.judge.judge import JudgePanel
    from omk.llm.retry import RetryPolicy

    with EncodedServer(zeros_gzip(BOMB_MB), "gzip") as server:
        settings = {"openai": {"base_url": server.url + "/v1", "max_reply_bytes": CAP}}
        judge = JudgePanel([make_client("openai:judge-m", settings)], retry=RetryPolicy(retries=0))
        block, peak = peak_of(lambda: asyncio.run(graded(judge, sample(rubric="uses parameters"))))
    assert f"over the {CAP}-byte cap" in json.dumps(block)
    assert peak < PEAK_BOUND, f"{peak / MB:.0f} MB held while unpacking a {BOMB_MB} MB judge reply"


# --- the whole run --------------------------------------------------------------------------

# The peak of omk's own memory: VmHWM (KiB), which starts anew with the program. ru_maxrss would
# also count the test process this one was forked from, as large as the suite has made it.
RSS_PROBE = """
import os, re, runpy, sys
sys.argv = ["omk", *sys.argv[2:]]
try:
    runpy.run_module("omk", run_name="__main__")
finally:
    with open("/proc/self/status") as status, open(os.environ["RSS_OUT"], "w") as f:
        f.write(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM is in /proc/self/status on Linux")
def test_omk_eval_with_bombs_for_a_url_and_the_model_reply_errors_the_sample_and_goes_on(tmp_path):
    """The run as the attack pass made it: `omk eval` in a child process whose peak memory is read
    back; the sample is errored with a one-line reason, the other sample passes, no traceback."""
    root = Path(__file__).resolve().parent.parent
    run_bomb_mb = 2 * BOMB_MB  # the whole process holds more than one test's allocations: a bomb twice the bound
    with EncodedServer(zeros_gzip(run_bomb_mb), "gzip") as model, EncodedServer(stacked_bomb(), "gzip, gzip", "text/plain") as pages:
        samples = [
            {"sample_id": "bombed", "prompt": "hi", "assertions": [{"type": "contains", "value": "x"}]},
            {"sample_id": "page", "prompt": f"Read {pages.url}/doc", "assertions": [{"type": "contains", "value": "x"}]},
        ]
        (tmp_path / "eval-samples.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
        (tmp_path / "omk.yaml").write_text(
            f"target: openai:m\nopenai:\n  base_url: {model.url}/v1\n  max_reply_bytes: {CAP}\nurl_max_bytes: {CAP}\n",
            encoding="utf-8",
        )
        env = {**os.environ, "NO_COLOR": "1", "OMK_URL_ALLOW": "127.0.0.1", "RSS_OUT": str(tmp_path / "rss"),
               "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
        for name in ("OMK_TARGET", "OMK_JUDGE", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
            env.pop(name, None)
        proc = subprocess.run(
            [sys.executable, "-c", RSS_PROBE, "-", "eval", "eval-samples.json", "--out", "run", "--no-cache"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
        )
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    results = {r["sample_id"]: r for r in report["results"]}
    assert results["bombed"]["status"] == "error"
    assert f"over the {CAP}-byte cap (max_reply_bytes in omk.yaml)" in results["bombed"]["error"]
    assert "\n" not in results["bombed"]["error"]
    assert results["page"]["urls"][0]["error"] == "larger than the 1 MB size cap"
    peak_kib = int((tmp_path / "rss").read_text())
    # omk's own start-up and run take most of this; unpacking the reply whole would need the bomb's size on top
    assert peak_kib * 1024 < 160 * MB, f"omk eval peaked at {peak_kib // 1024} MB with a {run_bomb_mb} MB bomb"
