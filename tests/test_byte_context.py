"""Byte contexts cut at character boundaries and name the differing characters (issue 19)."""

from __future__ import annotations

import pytest

from harness.core.model import FieldDiff
from harness.verdict.diff import field_diff_json, render_field_diff
from harness.verdict.text import around, describe_difference, first_diff_offset


@pytest.mark.parametrize("width", range(0, 9))
def test_context_never_splits_a_character(width: int) -> None:
    data = "ééé€€€😀😀 ab".encode()
    for offset in range(len(data)):
        shown = around(data, offset, width)
        assert "\ufffd" not in shown and "\\x" not in shown


def test_a_real_replacement_character_and_an_invalid_byte_read_differently() -> None:
    assert "⟨U+FFFD⟩" in around("a\ufffdb".encode(), 1)
    assert "\\xff" in around(b"a\xffb", 1) and "U+FFFD" not in around(b"a\xffb", 1)


def test_the_differing_characters_are_named() -> None:
    assert (
        describe_difference(b"a b", b"abb", 1) == "reference U+0020 SPACE, implementation U+0062 LATIN SMALL LETTER B"
    )
    ref, port = "hé".encode(), "hè".encode()
    offset = first_diff_offset(ref, port)
    assert offset == 2  # inside the character: both start with 0xC3
    assert describe_difference(ref, port, offset) == (
        "reference U+00E9 LATIN SMALL LETTER E WITH ACUTE, implementation U+00E8 LATIN SMALL LETTER E WITH GRAVE"
    )
    assert (
        describe_difference(b"a\r", b"a", 1) == "reference U+000D CR (control), implementation the end (no more bytes)"
    )


def test_terminal_and_report_json_say_the_same_and_absent_is_not_eight_bytes() -> None:
    diff = FieldDiff("coreMemory", "x y", "xyy", 1)
    info = field_diff_json(diff)
    assert info["difference"] == "reference U+0020 SPACE, implementation U+0079 LATIN SMALL LETTER Y"
    assert info["difference"] in render_field_diff(diff)
    missing = field_diff_json(FieldDiff("coreMemory", "abc", None, 0, True, False))
    assert missing["impl_bytes"] is None and "absent" in missing["difference"]
    assert "implementation absent" in render_field_diff(FieldDiff("coreMemory", "abc", None, 0, True, False))
