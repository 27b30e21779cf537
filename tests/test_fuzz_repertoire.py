"""`conformance fuzz` draws what users can write: Unicode's assigned repertoire up to the reference runtime's
version (harness.tools.fuzz.repertoire), surrogates in input strings, odd and non-finite numbers, invalid clocks
and `core.quotePath=false`; inputs no request can carry are refused as the loader refuses them."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_fuzz_shapes import examples

from harness.cases.inputs import clock_error, is_invalid_date, js_value, non_finite_at
from harness.cases.load import DEFAULT_INPUTS, load_text
from harness.cases.write import case_document, dump_yaml
from harness.core.repomodel import RepoModel
from harness.tools.batch_compile import Candidate
from harness.tools.fuzz import campaign as fuzz
from harness.tools.fuzz import repertoire as fuzz_repertoire
from harness.tools.fuzz.campaign import is_refused, refusal
from harness.tools.fuzz.lifecycle import is_refused as lifecycle_refused
from harness.tools.fuzz.lifecycle import lifecycle_documents, lifecycle_scenario
from harness.tools.fuzz.lifecycle import refusal as lifecycle_refusal
from harness.tools.fuzz.repertoire import NONCHARACTERS, limit_version, pools, unicode_text
from harness.tools.fuzz.strategies import compile_inputs, repo_models


@pytest.fixture(autouse=True)
def icu_limit() -> Iterator[None]:
    limit_version(None)
    yield
    limit_version(None)


def _in(pool: str, code: int) -> bool:
    return any(start <= code <= end for start, end in pools()[pool])


def test_the_repertoire_is_icus_unicode_17_beyond_pythons_unicodedata() -> None:
    assert fuzz_repertoire.icu_unicode_version() == (17, 0)
    assert _in("any", 0x20C1) and _in("recent", 0x20C1)  # SAUDI RIYAL SIGN, Unicode 17
    assert unicodedata.category("\u20c1") == "Cn"  # Python 3.11's unicodedata (14.0) has not got it
    assert _in("han", 0x31350) and _in("han", 0x4E00) and _in("han", 0xF900)  # Ext H, URO, a compatibility ideograph
    assert _in("mark", 0x0301) and not _in("mark", 0x0041)
    assert not _in("any", 0x0378) and not _in("any", 0xFDD0)  # unassigned; a noncharacter (drawn on its own)
    assert not _in("any", 0xD800) and _in("surrogate", 0xD800)
    assert _in("any", 0xE000) and _in("any", 0x10FFFD)  # private use is assigned


def test_the_repertoire_stops_at_the_runtimes_unicode_version() -> None:
    limit_version((16, 0))  # node 22.19.0's ICU 77.1
    assert not _in("any", 0x20C1)  # Unicode 17
    assert _in("any", 0x1CC00)  # Symbols for Legacy Computing Supplement, Unicode 16
    limit_version((9, 0))
    assert not _in("recent", 0x1F970) and not pools()["recent"]


def test_fuzz_takes_the_oldest_unicode_version_of_its_references() -> None:
    class Ref:
        def __init__(self, unicode: str | None) -> None:
            self.runner = self
            self.unicode = unicode

        def describe(self) -> dict[str, Any]:
            return {"info": {"unicode": self.unicode}}

    class FakeSession:
        def __init__(self, *versions: str | None) -> None:
            self.references = [Ref(v) for v in versions]

    assert fuzz.unicode_limit(FakeSession("17.0", "16.0", None)) == (16, 0)  # type: ignore[arg-type]
    assert fuzz.unicode_limit(FakeSession("99.0")) == (17, 0)  # type: ignore[arg-type]  # never past the repertoire


def test_text_is_weighted_toward_recent_han_combining_and_noncharacters() -> None:
    text = "".join(examples(unicode_text(), 400))
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
    assert sum(_in("recent", ord(ch)) for ch in text) > len(text) / 8
    assert sum(_in("han", ord(ch)) for ch in text) > len(text) / 10
    assert any(_in("mark", ord(ch)) for ch in text) and any(ord(ch) in NONCHARACTERS for ch in text)
    assert any(unicodedata.category(ch) == "Cn" and ord(ch) not in NONCHARACTERS for ch in text)  # past 14.0


def test_repositories_have_non_ascii_names_and_half_set_core_quotepath_false() -> None:
    models: list[RepoModel] = examples(repo_models(), 200)
    raw = [m for m in models if ("core.quotePath", "false") in m.shape.config]
    assert 40 <= len(raw) <= 160, len(raw)  # about half
    names = [name.decode("utf-8", "replace") for m in raw for name in m.head]
    assert sum(not name.isascii() for name in names) > len(names) / 8
    assert any(any(_in("recent", ord(ch)) for ch in name) for name in names)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _numbers(value: Any) -> Iterator[int | float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield value
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        yield from _numbers(item)


def test_inputs_are_javascript_strings_with_lone_surrogates_and_odd_numbers() -> None:
    drawn = [i for i in examples(compile_inputs, 600) if not is_refused(i)]
    assert all(js_value(inputs) == inputs for inputs in drawn)  # what the loader makes of a case's inputs
    strings = [s for inputs in drawn for s in _strings(inputs)]
    assert any(any(0xD800 <= ord(ch) <= 0xDFFF for ch in s) for s in strings)  # a lone surrogate, kept
    assert any(any(ord(ch) > 0xFFFF for ch in s) for s in strings)
    skills = [i["client_skills"] for i in drawn if isinstance(i.get("client_skills"), list)]
    assert any(isinstance(s, dict) and not str(s.get("name", "")).isascii() for v in skills for s in v)
    numbers = {repr(n) for v in skills for n in _numbers(v)}
    assert {"-0.0", "1e+21", str(10**400)} & numbers


def test_saved_cases_load_back_to_the_inputs_fuzzed() -> None:
    drawn = [i for i in examples(compile_inputs, 300) if not is_refused(i)]
    model = examples(repo_models(), 1)[0]
    for inputs in drawn:
        doc = case_document("fuzz-1", "generated", model, tags=["fuzz"], inputs=inputs)
        loaded = load_text(dump_yaml(doc), Path("x") / "compile" / "fuzz-1.yaml", "compile")
        assert loaded.inputs == {**DEFAULT_INPUTS, **inputs}


def test_a_value_met_twice_is_written_out_not_aliased() -> None:
    shared = {"name": "x"}
    text = dump_yaml({"a": [shared, shared]})
    assert "*id" not in text and "&id" not in text


def test_inputs_no_request_can_carry_are_drawn_and_refused_at_their_line() -> None:
    refused = [i for i in examples(compile_inputs, 600) if is_refused(i)]
    assert any(non_finite_at(i) is not None for i in refused)
    assert any(isinstance(i.get("now"), str) and clock_error(i["now"]) for i in refused)
    assert any("client_skills" in i for i in refused)
    model = examples(repo_models(), 1)[0]
    assert [refusal(Candidate(model, i)) for i in refused] == [None] * len(refused)


def test_a_loader_that_let_a_non_finite_number_through_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz, "load_text", lambda *args: None)
    model = examples(repo_models(), 1)[0]
    problem = refusal(Candidate(model, {"previous_message_count": math.inf}))
    assert problem is not None and "accepted" in problem


def test_lifecycle_steps_move_the_clock_to_invalid_dates_and_give_non_ascii_skills(tmp_path: Path) -> None:
    docs = examples(lifecycle_documents(), 300)
    steps = [s for d in docs for s in d["steps"]]
    assert any("clock" in s and is_invalid_date(s["clock"]) for s in steps)  # upstream throws at that turn
    names = [
        k["name"]
        for s in steps
        if isinstance(s.get("client_skills"), list)
        for k in s["client_skills"]
        if isinstance(k, dict) and isinstance(k.get("name"), str)
    ]
    assert any(not name.isascii() for name in names)
    refused = [d for d in docs if lifecycle_refused(d)]
    assert refused and [lifecycle_refusal(d, tmp_path) for d in refused] == [None] * len(refused)
    for doc in docs:
        if not lifecycle_refused(doc):
            lifecycle_scenario(doc, "candidate", tmp_path)  # every other one is a case the loader takes
