"""write_atomic: whole files only, the mode a plain open() gives, and no change to the process."""

from __future__ import annotations

import os

import pytest

from omk.io.fileio import write_atomic


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def test_the_file_gets_the_mode_open_would_give_it(tmp_path, umask_027):
    write_atomic(tmp_path / "new" / "report.json", "{}\n")
    with open(tmp_path / "plain.txt", "w") as f:
        f.write("x")
    assert (tmp_path / "new" / "report.json").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "plain.txt").stat().st_mode & 0o777 == 0o640


def test_the_umask_is_read_by_nobody_and_never_set(tmp_path, monkeypatch):
    def no_umask(mask):
        raise AssertionError("write_atomic changed the process umask")

    monkeypatch.setattr(os, "umask", no_umask)
    write_atomic(tmp_path / "a.txt", "中文\n")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "中文\n"


def test_a_replaced_file_is_whole_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "report.json"
    write_atomic(path, "old")
    write_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    path = tmp_path / "report.json"
    write_atomic(path, "old")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "bad \ud800 surrogate")
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_symlink_at_the_temporary_name_is_not_followed(tmp_path, monkeypatch):
    import secrets

    victim = tmp_path / "victim"
    victim.write_text("keep")
    names = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".r.json.aaaaaaaaaaaa").symlink_to(victim)
    write_atomic(tmp_path / "r.json", "data")
    assert victim.read_text() == "keep"
    assert (tmp_path / "r.json").read_text() == "data"
