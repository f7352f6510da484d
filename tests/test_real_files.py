"""Files shaped like real third-party eval files load (or fail with one located line saying why)."""

from __future__ import annotations

import json

import pytest
from loader_helpers import load, problems

from omk.loader.formats.detect import OMK, detect


def test_an_omk_schema_version_is_accepted(tmp_path):
    text = """
    schemaVersion: "omk.eval-sample-set/v1"
    samples:
      - {sample_id: a, prompt: hi}
    """
    assert [s.sample_id for s in load(tmp_path, "s.yaml", text).samples] == ["a"]
    data = {"schemaVersion": "omk.eval-sample-set/v1", "samples": [{"sample_id": "a", "prompt": "hi"}]}
    assert [s.sample_id for s in load(tmp_path, "s.json", json.dumps(data)).samples] == ["a"]


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ('"omk.eval-sample-set/v2"', '"omk.eval-sample-set/v2" is a newer sample-set format than this omk reads'),
        ('"1.2.0"', '"1.2.0" is an M365 eval document version, but the file has "samples"'),
        ("7", "7 is not a version omk knows"),
    ],
)
def test_an_unknown_schema_version_names_the_versions_omk_reads(tmp_path, version, says):
    found = problems(tmp_path, "s.yaml", f"samples:\n  - {{sample_id: a, prompt: hi}}\nschemaVersion: {version}\n")
    assert len(found) == 1 and found[0].startswith(f"s.yaml:3: schemaVersion: {says}")
    assert 'reads "omk.eval-sample-set/v1" (omk samples) and M365 eval documents of schema 1.x' in found[0]


def test_an_omk_version_without_samples_is_still_read_as_omk(tmp_path):
    assert detect({"schemaVersion": "omk.eval-sample-set/v2", "items": []}) == OMK
    found = problems(tmp_path, "s.json", '{"schemaVersion": "omk.eval-sample-set/v2", "items": []}')
    assert found[0].startswith('s.json:1: schemaVersion: "omk.eval-sample-set/v2" is a newer sample-set format')
