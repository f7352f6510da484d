"""What docs/run.md says the judge cache keys on: a rerun of the same output (under replay too)
is judged from `.omk/cache.sqlite`; a changed rubric or output is judged again; --no-cache calls."""

from __future__ import annotations

from judge_support import score_json

import omk
from omk.testing import ModelServer
from omk.testing.openai_chat import text_reply


def _files(tmp_path, rubric: str, output: str):
    (tmp_path / "s.yaml").write_text(f"- {{sample_id: a, prompt: hi, rubric: {rubric}}}\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(f'{{"sample_id": "a", "output": "{output}"}}\n', encoding="utf-8")


def test_the_judge_is_cached_on_its_whole_prompt(tmp_path):
    with ModelServer.for_openai([text_reply(score_json(4))] * 4) as fake:

        def run(**kw):
            return omk.evaluate(tmp_path / "s.yaml", target=f"replay:{tmp_path / 'r.jsonl'}", judge=f"openai:m@{fake.url}", cwd=tmp_path, **kw)

        _files(tmp_path, "Greets the user", "hello")
        assert run().results[0].scores.judge == 4
        assert len(fake.requests) == 1
        run()
        assert len(fake.requests) == 1  # same output, same rubric: from the cache
        _files(tmp_path, "Greets the user warmly", "hello")
        run()
        assert len(fake.requests) == 2  # the rubric is part of the judge prompt
        _files(tmp_path, "Greets the user warmly", "hello there")
        run()
        assert len(fake.requests) == 3  # so is the output
        run(cache=False)
        assert len(fake.requests) == 4
    assert (tmp_path / ".omk" / "cache.sqlite").exists()
