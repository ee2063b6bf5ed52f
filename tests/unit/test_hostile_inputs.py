"""The pieces behind the hostile-input faults (docs/faults.md): nesting depth, content, surrogates."""

from __future__ import annotations

import json

import pytest

from pytest_tau2.environment.env import MAX_ARGUMENT_DEPTH, _parse_arguments
from pytest_tau2.llm.completion import reply_text


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"note": "[" * 500 + '"\\' + "{" * 500, "n": [[1]]})
    assert _parse_arguments(text) == json.loads(text)


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 950, 5000])
def test_arguments_nested_past_the_limit_are_refused_unparsed(depth: int) -> None:
    text = '{"a": ' + "[" * depth + "]" * depth + "}"
    assert str(_parse_arguments(text)).startswith("arguments nested too deeply")


def test_arguments_at_the_limit_parse() -> None:
    depth = MAX_ARGUMENT_DEPTH - 1  # the outer object is one level
    text = '{"a": ' + "[" * depth + "]" * depth + "}"
    assert isinstance(_parse_arguments(text), dict)


@pytest.mark.parametrize(
    ("content", "text", "noted"),
    [
        (None, None, False),
        ("plain", "plain", False),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab", False),
        (
            [{"type": "image_url", "image_url": {"url": "x"}}],
            '[{"type": "image_url", "image_url": {"url": "x"}}]',
            True,
        ),
        (42, "42", True),
        (["a", "b"], '["a", "b"]', True),
        ({"k": "é"}, '{"k": "é"}', True),
        ("a\ud83dz", "a\\ud83dz", True),
        ([{"type": "text", "text": "\udfff"}], "\\udfff", True),
    ],
)
def test_reply_text_normalises_every_content_shape(content: object, text: str | None, noted: bool) -> None:
    got, note = reply_text(content)
    assert got == text
    assert (note is not None) is noted
    if got is not None:
        got.encode("utf-8")  # always encodable


def test_a_real_astral_character_is_untouched() -> None:
    assert reply_text("smile \U0001f600") == ("smile \U0001f600", None)
