"""Text assertions: substrings, equality, affixes, regex, length, word count."""

from __future__ import annotations

import pytest
from helpers import check, make_ctx, make_spec, run
from hypothesis import given, settings
from hypothesis import strategies as st

from omk.assertions.registry import PrepareError
from omk.assertions.text import js_text, word_count
from omk.samples.model import Status


def passed(raw: dict | str, output: str, **fields) -> bool:
    return check(raw, output, **fields).passed


# --- contains family ------------------------------------------------------------------------


def test_contains_is_case_insensitive_and_handles_cjk():
    assert passed("contains", "Beware of sql 注入 here", value="SQL 注入")
    assert not passed("contains", "Beware of SQL injection", value="SQL 注入")


def test_contains_failure_message_quotes_the_needle():
    result = check("contains", "nothing here", value="SQL 注入")
    assert result.message == 'output does not contain "SQL 注入"'


def test_contains_number_value_compares_as_js_text():
    assert passed("contains", "answer: 3", value=3)
    assert passed("contains", "answer: 1", value=1.0)  # JS String(1.0) is "1"
    assert not passed("contains", "answer: 1", value=1.5)
    assert passed("contains", "x = 2.5", value=2.5)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (3, "3"),
        (2.5, "2.5"),
        (-0.5, "-0.5"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.00001, "0.00001"),
    ],
)
def test_js_text_of_numbers(value, text):
    assert js_text(value) == text


def test_contains_on_empty_output_fails():
    assert not passed("contains", "", value="a")


def test_not_contains_is_the_negation():
    assert passed("not_contains", "all good", value="TODO")
    assert not passed("not_contains", "a todo left", value="TODO")


def test_not_contains_with_not_double_negates():
    assert passed({"type": "not_contains", "value": "todo", "not": True}, "has TODO")


def test_contains_all_reports_missing_values():
    result = check("contains_all", "alpha Beta", values=["alpha", "beta", "gamma"])
    assert not result.passed
    assert '"gamma"' in result.message
    assert '"alpha"' not in result.message
    assert result.metric == pytest.approx(2 / 3)
    assert passed("contains_all", "alpha Beta GAMMA", values=["alpha", "beta", "gamma"])


def test_contains_any():
    assert passed("contains_any", "prepared statement", values=["参数化", "Prepared Statement"])
    result = check("contains_any", "nothing", values=["a1", "b2"])
    assert not result.passed
    assert result.metric == 0


def test_lowercasing_is_full_unicode():
    assert passed("contains", "ÉCOLE", value="école")
    assert passed("contains", "ΟΔΟΣ", value="οδος")  # final sigma, like JS toLowerCase


# --- equals / affixes -------------------------------------------------------------------------


def test_equals_trims_js_whitespace_and_is_case_sensitive():
    assert passed("equals", "\ufeff\u00a0 42 \r\n\u3000", value="42")
    assert passed("equals", "42", value=42)
    assert not passed("equals", "Yes", value="yes")
    assert not passed("equals", "a  b", value="a b")  # inner whitespace counts


def test_not_equals():
    assert passed("not_equals", "no", value="yes")
    assert not passed("not_equals", " yes ", value="yes")


def test_starts_and_ends_with_ignore_case_but_do_not_trim():
    assert passed("starts_with", "Hello world", value="hello")
    assert not passed("starts_with", " Hello world", value="hello")
    assert not passed("starts_with", "\ufeffHello", value="hello")
    assert passed("ends_with", "the END", value="end")
    assert not passed("ends_with", "the end\n", value="end")
    assert passed("ends_with", "结论：通过", value="通过")


# --- regex ---------------------------------------------------------------------------------


def test_regex_default_flag_is_i():
    assert passed("regex", "TODO: later", pattern="todo")


def test_regex_explicit_flags_replace_the_default():
    assert not passed("regex", "TODO", pattern="todo", flags="g")
    assert passed("regex", "TODO", pattern="todo", flags="")  # "" is falsy in JS: back to "i"
    assert passed("regex", "todo", pattern="todo", flags="g")


def test_regex_multiline_dotall_and_sticky():
    assert not passed("regex", "a\nb", pattern="^b", flags="i")
    assert passed("regex", "a\nb", pattern="^b", flags="m")
    assert not passed("regex", "a\nb", pattern="a.b", flags="i")
    assert passed("regex", "a\nb", pattern="a.b", flags="s")
    assert passed("regex", "xab", pattern="ab", flags="g")
    assert not passed("regex", "xab", pattern="ab", flags="y")
    assert passed("regex", "abx", pattern="ab", flags="y")


def test_regex_js_style_named_groups_and_unicode_properties():
    assert passed("regex", "id=42", pattern=r"(?<num>\d+)")
    assert passed("regex", "答案是中文", pattern=r"\p{Han}{2}", flags="u")
    assert not passed("regex", "english only", pattern=r"\p{Han}", flags="u")


def test_regex_runs_on_raw_output():
    assert passed("regex", "Straße", pattern="ß")


def test_invalid_pattern_is_a_prepare_error():
    with pytest.raises(PrepareError) as info:
        make_spec("regex", pattern="(unclosed")
    assert info.value.field == "pattern"
    assert str(info.value).startswith("invalid regular expression:")


@pytest.mark.parametrize("flags", ["x", "ig2", "ii"])
def test_bad_flags_are_a_prepare_error(flags):
    with pytest.raises(PrepareError) as info:
        make_spec("regex", pattern="a", flags=flags)
    assert info.value.field == "flags"


def test_regex_prepared_once_is_reused():
    spec = make_spec("regex", pattern="abc")
    compiled = spec.compiled
    run(spec, make_ctx("abc"))
    assert spec.compiled is compiled


def test_nested_quantifier_that_the_regex_package_optimises_runs_fast():
    # `(a+)+$` hangs stdlib `re`; the regex package answers before its time runs out (a pattern
    # that ran out of time would fail with "ran out of time", whatever the machine's load)
    result = run(make_spec("regex", pattern="(a+)+$"), make_ctx("a" * 30 + "b", regex_timeout_s=30))[0]
    assert not result.passed  # the final "b" leaves no run of a's before the end
    assert result.message == 'output does not match "(a+)+$"'


def test_catastrophic_pattern_times_out_and_fails_even_under_not():
    spec = make_spec("regex", pattern="(a|aa)+$")
    result = run(spec, make_ctx("a" * 40 + "b", regex_timeout_s=0.1))[0]
    assert result.status is Status.FAILED
    assert "ran out of time" in result.message
    negated = run(
        make_spec("regex", pattern="(a|aa)+$", **{"not": True}), make_ctx("a" * 40 + "b", regex_timeout_s=0.1)
    )
    assert negated[0].status is Status.FAILED


# --- length and word count --------------------------------------------------------------------


def test_lengths_count_code_points():
    emoji = "👍🏽ok"  # thumbs up + skin tone = 2 code points (4 UTF-16 units)
    assert check("max_length", emoji, value=4).passed
    assert not check("max_length", emoji, value=3).passed
    assert check("min_length", "中文字", value=3).passed
    assert not check("min_length", "中文字", value=4).passed


def test_length_limits_equal_to_the_value_pass_and_metric_is_set():
    result = check("max_length", "x" * 500, value=500)
    assert result.passed
    assert result.metric == 500
    result = check("max_length", "x" * 812, value=500)
    assert not result.passed
    assert result.message == "length 812 > max 500"
    assert check("min_length", "", value=0).passed
    assert not check("min_length", "", value=1).passed


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("   ", 0),
        ("one two  three", 3),
        ("这是一个测试", 6),
        ("你好，世界", 4),
        ("hello世界 foo", 4),
        ("ひらがな カタカナ", 8),
        ("한국어 문장", 5),
        ("a\u00a0b\u3000c", 3),  # NBSP and ideographic space separate words (JS \s)
        ("a\u200bb", 1),  # zero-width space does not
        ("— dash counts", 3),
    ],
)
def test_word_count(text, count):
    assert word_count(text) == count


def test_word_count_limits():
    assert check("word_count_min", "这是一个测试", value=6).passed
    assert not check("word_count_min", "这是一个测试", value=7).passed
    result = check("word_count_max", "one two three", value=2)
    assert not result.passed
    assert result.metric == 3
    assert result.message == "word count 3 > max 2"
    assert check("word_count_max", "", value=0).passed


def test_zero_width_characters_are_not_words():
    from omk.assertions.text import word_count

    assert word_count("我\u200b们") == 2
    assert word_count("hello\u200bworld") == 1  # 0.54: not whitespace, so one word
    assert word_count("\u200b") == 0


_ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=80)


@settings(max_examples=300, deadline=None)
@given(_ASCII)
def test_word_count_of_ascii_text_is_the_unicode_rule(text):
    """ASCII text takes a shortcut (bytes split on JS's ASCII whitespace): the same count as the
    full rule, the \\x1c-\\x1f separators (whitespace to Python's str.split, not to JS) included."""
    from omk.assertions.text import _unicode_word_count

    assert word_count(text) == _unicode_word_count(text)
    assert word_count("a\x1cb \x1f c\x0bd") == 4  # "a\x1cb", "\x1f", "c", "d"
