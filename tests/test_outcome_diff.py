"""harness.verdict.diff: one rule for "differs", and every caller (run's verdict, reduce's signature, drift,
bisect, add-case's verification, lifecycle steps) answers the same for null against absent."""

from __future__ import annotations

import pytest

from harness.core.model import Outcome, Scenario, Status
from harness.tools.releases.bisect import first_change
from harness.tools.releases.drift import changes
from harness.verdict.diff import (
    ABSENT_BOTH,
    BOTH,
    IMPL_ONLY,
    REFERENCE_ONLY,
    differs,
    field_diff_json,
    mapping_diff,
    observation_diffs,
    outcome_diff,
    presence,
    value_of,
)
from harness.verdict.judge import judge
from harness.verdict.signature import signature_of

RECORD = {"content": "c", "coreMemory": "m", "compiledAt": "t", "rawSystemHash": "h"}
NULL = Outcome("ok", record={**RECORD, "memfsRevision": None})
ABSENT = Outcome("ok", record=dict(RECORD))
SCENARIO = Scenario("c", "d", __import__("pathlib").Path("cases/compile/c.yaml"), (), {}, {})


def test_the_rule_for_one_value() -> None:
    assert not differs(None, None)
    assert differs(value_of({"a": None}, "a"), value_of({}, "a"))  # null against absent
    assert not differs(value_of({}, "a"), value_of({}, "a"))  # absent on both sides
    assert differs(1, 2) and not differs("x", "x")
    assert mapping_diff({"a": None, "b": 1}, {"b": 1, "c": None}) == ["a", "c"]


def test_null_and_absent_differ_in_every_caller() -> None:
    diffs = outcome_diff(NULL, ABSENT)
    assert [(d.field, d.reference_present, d.impl_present) for d in diffs] == [("memfsRevision", True, False)]
    assert presence(NULL, ABSENT)["memfsRevision"] == REFERENCE_ONLY
    assert judge(SCENARIO, "0.32.18", NULL, ABSENT)[0] == Status.FAIL
    signature = signature_of("0.32.18", NULL, ABSENT)
    assert signature is not None and signature.diffs == (("memfsRevision", "absent-in-impl"),)
    assert changes(NULL, ABSENT) == ["memfsRevision (removed)"]
    assert first_change(["a", "b"], {"a": NULL, "b": ABSENT}.__getitem__).first_changed == "b"
    assert [d["observation"] for d in observation_diffs({"x": None}, {})] == ["x"]


def test_absent_on_both_sides_is_agreement_everywhere() -> None:
    assert outcome_diff(ABSENT, ABSENT) == []
    assert presence(ABSENT, ABSENT)["memfsRevision"] == ABSENT_BOTH and presence(NULL, NULL)["content"] == BOTH
    assert judge(SCENARIO, "0.32.18", ABSENT, ABSENT)[0] == Status.PASS
    assert signature_of("0.32.18", ABSENT, ABSENT) is None
    assert changes(ABSENT, ABSENT) == []
    assert first_change(["a", "b"], {"a": ABSENT, "b": ABSENT}.__getitem__).first_changed is None


def test_the_port_lacking_a_field_is_absent_in_port() -> None:
    assert presence(ABSENT, NULL)["memfsRevision"] == IMPL_ONLY
    signature = signature_of("r", ABSENT, NULL)
    assert signature is not None and signature.diffs == (("memfsRevision", "absent-in-reference"),)


REVISION = Outcome("ok", record={**RECORD, "memfsRevision": "9f3c0d1"})


def test_a_field_present_with_value_null_is_null_not_absent() -> None:
    # both sides have memfsRevision; one holds null: a value difference, not a missing field
    assert [(d.reference_present, d.impl_present) for d in outcome_diff(NULL, REVISION)] == [(True, True)]
    for reference, port, kind in [(NULL, REVISION, "null-in-reference"), (REVISION, NULL, "null-in-impl")]:
        signature = signature_of("r", reference, port)
        assert signature is not None and signature.diffs == (("memfsRevision", kind),)
    # and the report says null, 4 bytes, where a missing field is absent with no size
    null_side = field_diff_json(outcome_diff(NULL, REVISION)[0])
    assert (null_side["reference_bytes"], null_side["reference_context"]) == (4, "null")
    absent_side = field_diff_json(outcome_diff(ABSENT, REVISION)[0])
    assert (absent_side["reference_bytes"], absent_side["reference_context"]) == (None, "<absent>")
    assert "absent" not in null_side["difference"] and "absent" in absent_side["difference"]


def test_a_throw_against_a_record_names_the_side_that_has_no_throw_absent() -> None:
    [diff] = outcome_diff(Outcome("thrown", thrown="RangeError: Invalid Date"), ABSENT)
    assert (diff.field, diff.reference_present, diff.impl_present) == ("thrown", True, False)
    assert field_diff_json(diff)["impl_bytes"] is None


@pytest.mark.parametrize("fields", [None, ("content",)])
def test_two_throws_agree_whatever_the_message_and_a_throw_against_a_record_differs(fields: tuple | None) -> None:
    one, two = Outcome("thrown", thrown="TypeError: a"), Outcome("thrown", thrown="TypeError: b")
    assert outcome_diff(one, two, fields) == []
    assert [d.field for d in outcome_diff(one, ABSENT, fields)] == ["thrown"]


def test_fields_none_compares_every_field_either_record_has() -> None:
    extra = Outcome("ok", record={**RECORD, "other": 1})
    assert [d.field for d in outcome_diff(ABSENT, extra, None)] == ["other"]
    assert outcome_diff(ABSENT, extra) == []  # the compared fields only
