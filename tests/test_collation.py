"""memfs_prompt.collation is JavaScript `localeCompare` as the pinned bun runs it (ICU 78.3, Unicode 17).

- the ICU the port loads is the one bun reports (`process.versions`, measured);
- the ASCII fast path builds ICU's own sort keys, byte for byte, on every ASCII string tried
  (every two-character string, random strings, runs of common weights past ICU's run limits);
- bun's measured order on pairs of each class where the previous collation (pyuca, UCA 9) differed,
  on canonically equivalent strings and on lone surrogates;
- against the pinned bun itself: a few hundred seeded pairs from benchmarks.collation's generator
  (`python -m benchmarks.collation --pairs 200000` is the large run).
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memfs_prompt import collation
from memfs_prompt.collation import ascii_sort_key, icu_sort_key, locale_compare_key

# Measured (bun 1.4.5): process.versions.icu, process.versions.unicode; Intl.Collator().resolvedOptions()
# is {locale: "en-US", usage: "sort", sensitivity: "variant", ignorePunctuation: false, numeric: false,
# caseFirst: "false", collation: "default"}.
BUN_ICU, BUN_UNICODE = "78.3", "17.0"


def sign(left: str, right: str) -> int:
    a, b = locale_compare_key(left), locale_compare_key(right)
    return (a > b) - (a < b)


def test_the_port_loads_the_icu_bun_reports() -> None:
    assert (collation.ICU_VERSION, collation.UNICODE_VERSION) == (BUN_ICU, BUN_UNICODE)
    info = collation.info()
    assert info["icu"] == BUN_ICU and info["unicode"] == BUN_UNICODE and info["locale"] == "en-US"
    assert info["binding"].startswith("icu4py ")


def test_an_unknown_module_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = collation.NO_SUCH_NAME


# --- the ASCII fast path builds ICU's keys ------------------------------------------------------


def test_every_two_character_ascii_string_has_icus_key() -> None:
    mismatches = [
        (a, b)
        for a, b in itertools.product(range(128), repeat=2)
        if ascii_sort_key(chr(a) + chr(b)) != icu_sort_key(chr(a) + chr(b))
    ]
    assert mismatches == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=40))
def test_an_ascii_string_has_icus_key(value: str) -> None:
    assert ascii_sort_key(value) == icu_sort_key(value)


@pytest.mark.parametrize("length", [1, 2, 32, 33, 34, 35, 66, 67, 96, 97, 98, 99, 194, 195, 255, 256, 257, 400])
def test_long_runs_of_common_weights_compress_as_icu_does(length: int) -> None:
    # ICU writes one byte per run of common secondaries (at most 33) and tertiaries (at most 97)
    for value in ("a" * length, "a" * length + "B", "B" + "a" * length, "Ab" * length, "-" * length + "Q" * length):
        assert ascii_sort_key(value) == icu_sort_key(value), (length, value[:8])


def test_ignorable_control_characters_vanish_from_the_ascii_key() -> None:
    assert ascii_sort_key("a\x00b\x7f") == icu_sort_key("ab") == ascii_sort_key("ab")
    assert ascii_sort_key("\x00\x01") == icu_sort_key("") == b"\x01\x01\x00"


def test_locale_compare_key_takes_the_fast_path_only_for_ascii() -> None:
    assert locale_compare_key("Zeta") == icu_sort_key("Zeta")
    assert locale_compare_key("Zéta") == icu_sort_key("Zéta")


def test_keys_computed_in_several_threads_are_the_single_threaded_keys() -> None:
    values = [f"名前{i}\u0301x" for i in range(400)]
    expected = [icu_sort_key(v) for v in values]
    results: dict[int, list[bytes]] = {}

    def work(slot: int) -> None:
        results[slot] = [icu_sort_key(v) for v in values]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(keys == expected for keys in results.values())


def test_a_key_longer_than_the_buffer_is_whole() -> None:
    value = "\u1100\u1161\u11a8\u0301" * 600  # each unit writes several bytes on every level
    key = icu_sort_key(value)
    assert len(key) > 1024 and key.endswith(b"\x00") and key == icu_sort_key(value)


# --- bun's measured order -----------------------------------------------------------------------

# Measured (bun 1.4.5, ICU 78.3): Math.sign(a.localeCompare(b)). Each pair is one the previous
# collation (pyuca 1.2, UCA 9.0) ordered the other way, unless the comment says otherwise.
MEASURED_PAIRS = [
    # Han: radical-stroke, not block then code point
    ("\U00020bb7", "\u5468", -1),  # 𠮷 (Extension B) before 周
    ("\u3560", "\u73c6", -1),  # 㕠 (Extension A) before 珆
    ("\u4e28", "\u3400", 1),  # 丨 after 㐀
    ("\U00020bb7\u91ce\u5bb6", "\u5409\u91ce\u5bb6", 1),  # same in both collations
    # encoded after Unicode 9
    ("\U0001f970", "a", -1),  # 🥰 (11.0)
    ("\U0001f970", "\U0001f600", -1),
    ("\u20bf", "a", -1),  # ₿ (10.0)
    ("\U0001fae0", "z", -1),  # 🫠 (14.0)
    ("\U00011fd2", "E", -1),
    ("\u20c1", "a", -1),  # SAUDI RIYAL SIGN (17.0)
    ("\U0001faea", "a", -1),  # DISTORTED FACE (17.0)
    # noncharacters
    ("\ufffe", "D", -1),  # U+FFFE: the lowest primary weight
    ("\uffff", "\U0004ffff", 1),  # U+FFFF: the highest
    ("\U0010ffff", "\uffff", -1),
    ("\ufdd0", "\ufffe", 1),
    # numbers that are not decimal digits
    ("0", "\u0bf0", -1),  # TAMIL NUMBER TEN after the digits
    ("10", "\u2180", -1),  # ROMAN NUMERAL ONE THOUSAND C D
    ("1", "\u1372", -1),  # ETHIOPIC NUMBER TEN
    ("\u09f4", "0", 1),  # BENGALI CURRENCY NUMERATOR ONE
    ("2", "\U0001fbf1", 1),  # SEGMENTED DIGIT ONE (13.0)
    ("\U00011955", "\u0f25", 0),  # two digits five: equal on every level
    # canonical equivalence (ICU normalization on): 0; a NUL blocks reordering
    ("a\u0301\u0323", "a\u0323\u0301", 0),
    ("\u1e09", "c\u0327\u0301", 0),
    ("e\u0301", "\u00e9", 0),
    ("c\u0301\u1dfa", "c\u1dfa\u0301", 0),
    ("\u0958", "\u0915\u093c", 0),
    ("c\u0301\u1dfa", "c\u0301\u0000\u1dfa", 1),  # node 22.19 (ICU 77.1): 0
    ("a\u0301\u0323", "a\u0301\u0000\u0323", 1),
    ("\U00024775", "\U00024777", 1),  # node 22.19 (ICU 77.1): -1
    # lone surrogates (a JS string may hold them) and a surrogate pair given as two code points
    ("\ud800", "a", 1),
    ("\ud800", "\ufffd", -1),
    ("\udc00", "\ud800", 1),
    ("a\ud800", "a", 1),
    ("\ud800", "\U00010000", 1),
    ("\udbff", "\uffff", -1),
    ("\ud83e\udd80", "\U0001f980", 0),
]


@pytest.mark.parametrize(("left", "right", "expected"), MEASURED_PAIRS, ids=lambda v: ascii(v)[1:-1])
def test_pairs_order_as_bun_measured_them(left: str, right: str, expected: int) -> None:
    assert sign(left, right) == expected
    assert sign(right, left) == -expected


# Measured (bun 1.4.5): [...names].sort((a, b) => a.localeCompare(b)) for the names of the
# collation-icu-*-skills cases.
MEASURED_SORTS = {
    "han": "一 㐀 丨 ⺀ 㕠 﨎 吉 𠮷 周 珆",
    "unicode10": "🥰 🫠 \U0001faea 😀 $ ₿ \u20c1 a z 一 𰀀",
    "nonchar": "\ufffe a D 一 \ufdd0 \ufdef \U0004ffff \U0010ffff \uffff",
    "numeric": "0 1 ① ½ 10 2 ৴ ௰ ፲ ↀ",
}


@pytest.mark.parametrize("kind", sorted(MEASURED_SORTS))
def test_each_case_s_names_sort_as_bun_sorted_them(kind: str) -> None:
    expected = MEASURED_SORTS[kind].split(" ")
    shuffled = expected[:]
    random.Random(kind).shuffle(shuffled)
    assert sorted(shuffled, key=locale_compare_key) == expected


# --- against the pinned bun ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def bun() -> Path:
    """The pinned bun; skipped with the reason when it cannot be had outside CI (in CI: an error)."""
    if os.environ.get("LETTA_CONFORMANCE_OFFLINE") == "1":
        pytest.skip("LETTA_CONFORMANCE_OFFLINE=1: the pinned bun is not used")
    from harness.acquire.releases import ReferenceUnavailable, ensure_bun

    try:
        return ensure_bun()
    except ReferenceUnavailable as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the pinned bun is not available: {error}")


def collation_tool() -> Any:
    """benchmarks.collation (the generator and the bun oracle); benchmarks/ is not an installed package."""
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.append(root)
    from benchmarks import collation as tool

    return tool


@pytest.mark.integration
def test_generated_pairs_order_as_bun_orders_them(bun: Path) -> None:
    tool = collation_tool()
    pairs = tool.generate_pairs(600, seed=20260701)
    answer = tool.run_oracle(bun, pairs)
    assert answer["icu"] == BUN_ICU
    differ = [
        (a, b, ours, theirs)
        for (a, b, _), ours, theirs in zip(pairs, tool.port_signs(pairs), answer["signs"], strict=True)
        if ours != theirs
    ]
    assert differ == []


@pytest.mark.integration
def test_measured_pairs_are_still_what_bun_says(bun: Path) -> None:
    answer = collation_tool().run_oracle(bun, [(a, b, "measured") for a, b, _ in MEASURED_PAIRS])
    assert answer["signs"] == [expected for *_, expected in MEASURED_PAIRS]
    assert (answer["icu"], answer["unicode"]) == (BUN_ICU, BUN_UNICODE)
