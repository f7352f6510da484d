"""Finding URLs, telling placeholders apart, and splicing content in, as omk 0.23 did."""

from __future__ import annotations

import pytest

from omk.inline.urls import find_urls, inline_block, is_placeholder, splice


def test_urls_stop_at_cjk_whitespace_quotes_and_angle_brackets():
    text = '请看https://docs.corp.net/a/b?x=1&y=2#frag，然后 "https://q.io/z" <https://r.io/w> end'
    assert find_urls(text) == ["https://docs.corp.net/a/b?x=1&y=2#frag", "https://q.io/z", "https://r.io/w"]


def test_sentence_punctuation_after_a_url_is_not_part_of_it():
    # omk 0.23 kept it and fetched "https://a.com/x." (docs/urls.md says why omk differs)
    text = "see https://a.com/x. and (https://b.com/y), or https://c.com/z?; also https://d.com/w!' ok"
    assert find_urls(text) == ["https://a.com/x", "https://b.com/y", "https://c.com/z", "https://d.com/w"]


def test_parentheses_and_brackets_that_belong_to_the_url_stay():
    wiki = "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert find_urls(f"read {wiki}.") == [wiki]
    assert find_urls(f"({wiki})") == [wiki]
    assert find_urls("[link](https://a.com/docs/v2)") == ["https://a.com/docs/v2"]
    assert find_urls("http://[::1]:8080/a]") == ["http://[::1]:8080/a"]


def test_a_url_of_only_punctuation_after_the_scheme_is_no_url():
    assert find_urls("https://... and http://).") == []


def test_splice_expands_the_trimmed_url_and_keeps_the_sentence_punctuation():
    text = "读这个：https://a.com/x。Then https://a.com/x. again"
    out = splice(text, {"https://a.com/x": "DOC"})
    assert out == "读这个：" + inline_block("https://a.com/x", "DOC") + "。Then https://a.com/x. again"
    out = splice("see https://b.com/y.", {"https://b.com/y": "DOC"})
    assert out == "see " + inline_block("https://b.com/y", "DOC") + "."


def test_each_url_once_in_first_occurrence_order():
    assert find_urls("http://b.io/1 https://a.io/2 http://b.io/1") == ["http://b.io/1", "https://a.io/2"]


def test_only_lowercase_scheme_and_no_text_gives_nothing():
    assert find_urls("HTTPS://A.COM/x ftp://a.com/y") == []
    assert find_urls(None) == []
    assert find_urls("") == []


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com",
        "https://wiki.example.com/prd/feature-x",
        "http://EXAMPLE.ORG:8080/x",
        "https://a.b.example.net?q=1",
        "http://localhost:3000/api",
        "http://api.localhost/",
        "https://svc.test/x",
        "https://foo.invalid#top",
        "https://docs.example/page",
    ],
)
def test_placeholder_hosts_are_left_alone(url):
    assert is_placeholder(url)
    assert find_urls(f"read {url} now") == []


@pytest.mark.parametrize(
    "url",
    [
        "https://example.company.com/x",
        "https://notexample.com/x",
        "https://example.com.cn/x",
        "http://127.0.0.1:8000/doc",
        "https://testing.io/x",
        "https://docs.corp.internal/a",
    ],
)
def test_real_hosts_are_not_placeholders(url):
    assert not is_placeholder(url)
    assert find_urls(url) == [url]


def test_splice_puts_the_content_after_the_first_occurrence_only():
    text = "A https://a.io/x B https://a.io/x C"
    assert splice(text, {"https://a.io/x": "DOC"}) == "A https://a.io/x\n\n---\nDOC\n---" + " B https://a.io/x C"


def test_splice_does_not_touch_a_longer_url_sharing_the_prefix():
    text = "first https://a.io/x/y then https://a.io/x"
    out = splice(text, {"https://a.io/x": "SHORT"})
    assert out == "first https://a.io/x/y then " + inline_block("https://a.io/x", "SHORT")


def test_splice_never_expands_urls_inside_inlined_content():
    text = "https://a.io/1 and https://b.io/2"
    out = splice(text, {"https://a.io/1": "mentions https://b.io/2 inside", "https://b.io/2": "B"})
    assert out == inline_block("https://a.io/1", "mentions https://b.io/2 inside") + " and " + inline_block("https://b.io/2", "B")


def test_splice_leaves_urls_without_content_as_written():
    assert splice("x https://a.io/1 y", {}) == "x https://a.io/1 y"
