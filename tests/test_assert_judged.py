"""Judge-scored types: registered with their schemas, skipped without a judge."""

from __future__ import annotations

import pytest
from helpers import make_ctx, make_spec, run

from omk.assertions import registry
from omk.samples.model import Layer, Outcome, Status

JUDGED = ["semantic_similarity", "faithfulness", "answer_relevancy", "context_recall"]


@pytest.mark.parametrize("name", JUDGED)
def test_judged_types_are_fact_judge_kind_and_not_nestable(name):
    kind = registry.get(name)
    assert kind.kind == "judge"
    assert kind.layer is Layer.FACT
    assert not kind.nestable
    assert kind.schema["properties"]["threshold"] == registry.JUDGE_THRESHOLD


@pytest.mark.parametrize("name", JUDGED)
def test_skipped_without_a_judge_even_under_not(name):
    results = run(
        [make_spec(name, reference="r"), make_spec(name, reference="r", **{"not": True})], make_ctx("x")
    )
    assert [r.status for r in results] == [Status.SKIPPED, Status.SKIPPED]
    assert results[0].passed is None
    assert results[0].message == "skipped: no judge configured"


def test_judged_inside_a_set_is_ignored_by_the_set():
    spec = make_spec(
        {
            "type": "assert-set",
            "children": [
                {"type": "contains", "value": "x"},
                {"type": "semantic_similarity", "reference": "r"},
            ],
        }
    )
    result = run(spec, make_ctx("x"))[0]
    assert result.passed
    assert result.children[1].status is Status.SKIPPED


def test_with_a_judge_each_check_delegates_to_it_and_not_mirrors_the_score():
    class StubJudge:
        async def check_assertion(self, spec, ctx):
            return Outcome(True, metric=4.0, score=4.0, message=f"{spec.type} on {ctx.output}")

    results = run([make_spec(name, reference="r", **{"not": True}) for name in JUDGED], make_ctx("x", judge=StubJudge()))
    assert [r.status for r in results] == [Status.FAILED] * 4
    assert [r.score for r in results] == [2.0] * 4
    assert results[0].message == "semantic_similarity on x"


def test_answer_relevancy_schema_fields():
    props = registry.get("answer_relevancy").schema["properties"]
    assert {"uncertainty_weight", "scale", "threshold"} <= set(props)
    assert registry.get("semantic_similarity").schema["required"] == ["reference"]
