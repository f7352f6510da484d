"""The URL allow-list through `omk eval`: refused by default (prompt unchanged, the reason and the
flag to use in the report and on stderr, the run goes on), opened by omk.yaml `url_allow`,
`OMK_URL_ALLOW` or `--url-allow`, closed entirely by `--no-urls`; bad entries exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omk.cli.main import main


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("OMK_URL_ALLOW", "OMK_TARGET", "OMK_JUDGE", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def write_project(tmp: Path, prompt: str, omk_yaml: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    samples = {"samples": [{"sample_id": "s1", "prompt": prompt, "assertions": [{"type": "contains", "value": "answer"}]}]}
    (tmp / "eval-samples.json").write_text(json.dumps(samples), encoding="utf-8")
    (tmp / "responses.jsonl").write_text(json.dumps({"sample_id": "s1", "output": "the answer"}) + "\n", encoding="utf-8")
    (tmp / "omk.yaml").write_text("target: replay:responses.jsonl\nurl_timeout: 5\n" + omk_yaml, encoding="utf-8")
    return tmp / "eval-samples.json"


def run(samples: Path, out: Path, *flags: str) -> int:
    return main(["eval", str(samples), "--out", str(out), "--quiet", *flags])


def result(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))["results"][0]


def test_an_inside_url_is_refused_by_default_and_the_run_goes_on(tmp_path, http, capsys):
    url = http.url("/plain.txt")
    before = http.hits["/plain.txt"]
    code = run(write_project(tmp_path / "p", f"Summarise {url}"), tmp_path / "run")
    err = capsys.readouterr().err
    assert code == 0, err
    res = result(tmp_path / "run")
    assert res["prompt"] == f"Summarise {url}"  # unchanged
    assert res["status"] == "ok"
    assert res["passed"] is True
    [rec] = res["urls"]
    assert rec["status"] == "failed"
    assert rec["error"] == "refused: loopback address 127.0.0.1; allow it with --url-allow 127.0.0.1"
    assert "--url-allow" in rec["hint"]
    assert "OMK_URL_ALLOW" in rec["hint"]
    assert f"omk: URL not inlined: {url} — refused: loopback address 127.0.0.1; allow it with --url-allow 127.0.0.1" in err
    assert http.hits["/plain.txt"] == before


@pytest.mark.parametrize("how", ["omk.yaml list", "omk.yaml string", "env", "flag"])
def test_each_way_of_allowing_reaches_the_server(tmp_path, http, monkeypatch, capsys, how):
    port = http.base.rsplit(":", 1)[1]
    omk_yaml = {"omk.yaml list": f"url_allow:\n  - wiki.corp\n  - 127.0.0.1:{port}\n", "omk.yaml string": "url_allow: 127.0.0.0/8\n"}.get(how, "")
    flags = ["--url-allow", "10.0.0.0/8", "--url-allow", "127.0.0.1"] if how == "flag" else []
    if how == "env":
        monkeypatch.setenv("OMK_URL_ALLOW", "wiki.corp, 127.0.0.1")
    url = http.url("/plain.txt")
    assert run(write_project(tmp_path / "p", f"Summarise {url}", omk_yaml), tmp_path / "run", *flags) == 0, capsys.readouterr().err
    res = result(tmp_path / "run")
    assert res["urls"][0]["status"] == "inlined"
    assert "Release notes 2.4" in res["prompt"]


def test_an_allowed_localhost_is_fetched_although_it_is_a_placeholder(tmp_path, http, capsys):
    port = http.base.rsplit(":", 1)[1]
    url = f"http://localhost:{port}/plain.txt"
    assert run(write_project(tmp_path / "a", f"Read {url}"), tmp_path / "r1") == 0
    assert result(tmp_path / "r1")["urls"] == []  # a placeholder: not fetched, not reported
    assert run(write_project(tmp_path / "b", f"Read {url}"), tmp_path / "r2", "--url-allow", f"localhost:{port}") == 0
    assert result(tmp_path / "r2")["urls"][0]["status"] == "inlined", capsys.readouterr().err


def test_no_urls_fetches_nothing_even_when_allowed(tmp_path, http, monkeypatch, capsys):
    monkeypatch.setenv("OMK_URL_ALLOW", "127.0.0.1")
    url = http.url("/doc.html")
    before = http.hits["/doc.html"]
    assert run(write_project(tmp_path / "p", f"Summarise {url}"), tmp_path / "run", "--no-urls") == 0
    res = result(tmp_path / "run")
    assert res["urls"] == []
    assert res["prompt"] == f"Summarise {url}"
    assert http.hits["/doc.html"] == before
    assert "URL" not in capsys.readouterr().err


def test_a_bad_allow_flag_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        run(write_project(tmp_path / "p", "hi"), tmp_path / "run", "--url-allow", "http://wiki.corp/")
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--url-allow: 'http://wiki.corp/': write the host" in err
    assert "Traceback" not in err


def test_a_bad_omk_yaml_entry_names_file_line_and_field(tmp_path, capsys):
    samples = write_project(tmp_path / "p", "hi", "url_allow:\n  - wiki.corp\n  - 10.0.0.0/99\n")
    assert run(samples, tmp_path / "run") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tmp_path / 'p' / 'omk.yaml'}:5: url_allow: '10.0.0.0/99'"), err


def test_a_bad_env_entry_names_the_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OMK_URL_ALLOW", "127.0.0.1,file:///etc")
    assert run(write_project(tmp_path / "p", "hi"), tmp_path / "run") == 2
    assert capsys.readouterr().err.strip().startswith("OMK_URL_ALLOW: 'file:///etc': write the host")
