from hypothesis import given
from hypothesis import strategies as st

from omk.records import AssertionResult
from omk.samples.model import Layer, Status
from omk.scoring.layers import passes, ratio_to_score, round2, score_sample, weighted_score


def result(layer: Layer, status: Status, weight: float = 1.0) -> AssertionResult:
    return AssertionResult(type="contains", layer=layer, status=status, weight=weight, negate=False)


P, F, S = Status.PASSED, Status.FAILED, Status.SKIPPED


def test_seed_example_two_of_three_is_3_67():
    assert weighted_score([result(Layer.FACT, P), result(Layer.FACT, P), result(Layer.FACT, F)]) == 3.67


def test_round2_is_half_up_on_the_exact_binary_value():
    assert round2(1.005) == 1.0  # 1.005 is 1.00499999... in binary, as in JS toFixed
    assert round2(2.675) == 2.67
    assert round2(3.125) == 3.13  # exactly representable: half-up, unlike Python's banker's round()


def test_weights_and_skips():
    rs = [result(Layer.FACT, P, 2), result(Layer.FACT, F, 0.5), result(Layer.FACT, S, 10)]
    assert weighted_score(rs) == round2(1 + 4 * 2 / 2.5)
    assert weighted_score([result(Layer.FACT, S)]) is None


def test_composite_is_mean_of_present_layers_rounded_twice():
    rs = [result(Layer.FACT, P), result(Layer.FACT, P), result(Layer.FACT, F), result(Layer.BEHAVIOR, F)]
    scores = score_sample(rs, None)
    assert (scores.fact, scores.behavior, scores.judge) == (3.67, 1.0, None)
    assert scores.composite == round2((3.67 + 1.0) / 2)
    assert score_sample(rs, 4.0).composite == round2((3.67 + 1.0 + 4.0) / 3)


def test_no_layers_means_composite_zero_and_no_pass():
    scores = score_sample([], None)
    assert scores.composite == 0.0
    assert not passes(scores, 3.5)


def test_every_present_layer_must_reach_threshold():
    good = score_sample([result(Layer.FACT, P)], None)
    assert passes(good, 3.5)
    mixed = score_sample([result(Layer.FACT, P), result(Layer.BEHAVIOR, F)], None)
    assert mixed.composite == 3.0
    assert not passes(mixed, 3.0)  # composite reaches 3.0 but behavior is 1.0
    assert passes(score_sample([result(Layer.FACT, P)], 3.5), 3.5)


@given(st.lists(st.tuples(st.sampled_from([P, F, S]), st.floats(0.01, 100)), max_size=20))
def test_scores_stay_between_1_and_5(items):
    rs = [result(Layer.FACT, status, w) for status, w in items]
    score = weighted_score(rs)
    assert score is None or 1.0 <= score <= 5.0
    sample = score_sample(rs, None)
    assert sample.composite == 0.0 or 1.0 <= sample.composite <= 5.0


@given(st.floats(0, 1))
def test_ratio_to_score_is_monotonic_in_range(r):
    assert 1.0 <= ratio_to_score(r) <= 5.0
