"""memfs_prompt.quirks: each JS/git behaviour against what the real runtime does.

Sources of the expected values:
- "measured (bun 1.4.5)": the report at /tmp/quirks (README.txt, scripts q1..q5), run on the
  pinned bun 1.4.5 with `env -i PATH=/usr/bin:/bin HOME=... LANG=C.UTF-8 TZ=UTC`; the file of
  each table is named next to it.
- git: the test builds a repository and runs the real `git ls-tree` under an isolated env.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import subprocess
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memfs_prompt.jsvalues import JsDate
from memfs_prompt.quirks import (
    EXEC_MAX_BUFFER,
    bun_pragma_literal,
    decode_utf8_lossy,
    exceeds_exec_max_buffer,
    format_utc_timestamp,
    git_quoted_path,
    git_quotes_path,
    js_replace_all,
    js_trim,
    js_trim_end,
    js_trim_start,
    locale_compare_key,
    sha256_hex_of_js_string,
)

# --- trim ----------------------------------------------------------------------------------------

# Measured (bun 1.4.5), /tmp/quirks/q2_trim.js -> q2_bun.json: the code points that
# `(ch + "x" + ch).trim() === "x"`, over U+0000..U+3000 plus U+FEFF, U+205F, U+180E, U+200B,
# U+2028, U+2029, U+0085. trimStart and trimEnd strip exactly the same set.
MEASURED_TRIM_SET = frozenset(
    [
        9,
        10,
        11,
        12,
        13,
        32,
        160,
        5760,
        8192,
        8193,
        8194,
        8195,
        8196,
        8197,
        8198,
        8199,
        8200,
        8201,
        8202,
        8232,
        8233,
        8239,
        8287,
        12288,
        65279,
    ]
)
PROBED = sorted(set(range(0x3001)) | {0xFEFF, 0x205F, 0x180E, 0x200B, 0x2028, 0x2029, 0x0085})


def test_measured_trim_set_has_25_code_points() -> None:
    assert len(MEASURED_TRIM_SET) == 25


def test_js_trim_strips_exactly_the_measured_set() -> None:
    stripped = {cp for cp in PROBED if js_trim(chr(cp) + "x" + chr(cp)) == "x"}
    assert stripped == MEASURED_TRIM_SET


def test_js_trim_start_strips_the_measured_set_at_the_start_only() -> None:
    stripped = {cp for cp in PROBED if js_trim_start(chr(cp) + "x" + chr(cp)) == "x" + chr(cp)}
    assert stripped == MEASURED_TRIM_SET


def test_js_trim_end_strips_the_measured_set_at_the_end_only() -> None:
    stripped = {cp for cp in PROBED if js_trim_end(chr(cp) + "x" + chr(cp)) == chr(cp) + "x"}
    assert stripped == MEASURED_TRIM_SET


@pytest.mark.parametrize("cp", [0x85, 0x1C, 0x1D, 0x1E, 0x1F, 0x180E, 0x200B])
def test_js_trim_keeps_characters_python_strip_would_remove_or_js_does_not_count(cp: int) -> None:
    # U+0085 and U+001C..U+001F: str.strip() removes them, JS does not; U+180E/U+200B: neither is WhiteSpace.
    text = chr(cp) + "x" + chr(cp)
    assert js_trim(text) == text
    assert js_trim_start(text) == text
    assert js_trim_end(text) == text


def test_js_trim_strips_bom_which_python_strip_keeps() -> None:
    assert js_trim("\ufeffx\ufeff") == "x"
    assert "\ufeffx\ufeff".strip() != "x"  # why the quirk exists


def test_js_trim_strips_a_mixed_run_of_whitespace() -> None:
    # Measured (bun 1.4.5), q2_bun.json "mixed": " \t\n\u00a0\ufeff\u3000x\u2028\u2029\r\v\f ".trim() === "x"
    assert js_trim(" \t\n\u00a0\ufeff\u3000x\u2028\u2029\r\v\f ") == "x"


# --- UTF-8 decoding ------------------------------------------------------------------------------

# Measured (bun 1.4.5), /tmp/quirks/q3_decode.js -> q3_bun.json: the code points of
# execFileSync("cat", [file], {encoding: "utf8"}) for each byte file (named cases of q3_gen.py).
MEASURED_UTF8 = [
    ("lone_cont", b"a\x80b", [97, 65533, 98]),
    ("lone_cont_run", b"a\x80\x81\xbfb", [97, 65533, 65533, 65533, 98]),
    ("lone_cont_end", b"ab\x80", [97, 98, 65533]),
    ("trunc2_end", b"ab\xc3", [97, 98, 65533]),
    ("trunc3_end_1", b"ab\xe2", [97, 98, 65533]),
    ("trunc3_end_2", b"ab\xe2\x94", [97, 98, 65533]),
    ("trunc4_end_1", b"ab\xf0", [97, 98, 65533]),
    ("trunc4_end_2", b"ab\xf0\x9f", [97, 98, 65533]),
    ("trunc4_end_3", b"ab\xf0\x9f\x98", [97, 98, 65533]),
    ("trunc2_mid", b"a\xc3b", [97, 65533, 98]),
    ("trunc3_mid_2", b"a\xe2\x94b", [97, 65533, 98]),
    ("trunc4_mid_3", b"a\xf0\x9f\x98b", [97, 65533, 98]),
    ("trunc4_mid_2", b"a\xf0\x9fb", [97, 65533, 98]),
    ("overlong_c080", b"a\xc0\x80b", [97, 65533, 65533, 98]),
    ("overlong_c1bf", b"a\xc1\xbfb", [97, 65533, 65533, 98]),
    ("overlong_e08080", b"a\xe0\x80\x80b", [97, 65533, 65533, 65533, 98]),
    ("overlong_f0808080", b"a\xf0\x80\x80\x80b", [97, 65533, 65533, 65533, 65533, 98]),
    ("overlong_e09f_bf", b"a\xe0\x9f\xbfb", [97, 65533, 65533, 65533, 98]),
    ("surrogate_eda080", b"a\xed\xa0\x80b", [97, 65533, 65533, 65533, 98]),
    ("surrogate_pair_cesu", b"a\xed\xa0\xbd\xed\xb8\x80b", [97, 65533, 65533, 65533, 65533, 65533, 65533, 98]),
    ("surrogate_edbfbf", b"a\xed\xbf\xbfb", [97, 65533, 65533, 65533, 98]),
    ("above_max_f4908080", b"a\xf4\x90\x80\x80b", [97, 65533, 65533, 65533, 65533, 98]),
    ("f5", b"a\xf5\x80\x80\x80b", [97, 65533, 65533, 65533, 65533, 98]),
    ("f8", b"a\xf8\x88\x80\x80\x80b", [97, 65533, 65533, 65533, 65533, 65533, 98]),
    ("fe_ff", b"a\xfe\xffb", [97, 65533, 65533, 98]),
    ("ff_end", b"a\xff", [97, 65533]),
    ("bom_leading", b"\xef\xbb\xbfhello", [65279, 104, 101, 108, 108, 111]),
    ("bom_mid", b"he\xef\xbb\xbfllo", [104, 101, 65279, 108, 108, 111]),
    ("bom_twice", b"\xef\xbb\xbf\xef\xbb\xbfx", [65279, 65279, 120]),
    ("bom_only", b"\xef\xbb\xbf", [65279]),
    ("nul", b"a\x00b", [97, 0, 98]),
    ("valid_box", "└── ├── │   é".encode(), [9492, 9472, 9472, 32, 9500, 9472, 9472, 32, 9474, 32, 32, 32, 233]),
    ("valid_emoji", b"x\xf0\x9f\x98\x80y", [120, 128512, 121]),
    ("e2_then_ascii", b"\xe2(\xa1", [65533, 40, 65533]),
    ("c3_c3_a9", b"\xc3\xc3\xa9", [65533, 233]),
    ("f0_then_c3a9", b"\xf0\xc3\xa9", [65533, 233]),
    ("e0_a0", b"\xe0\xa0", [65533]),
    ("empty", b"", []),
    ("lone_cont_after_valid2", b"\xc3\xa9\xa9", [233, 65533]),
]


@pytest.mark.parametrize(("name", "data", "code_points"), MEASURED_UTF8, ids=[c[0] for c in MEASURED_UTF8])
def test_decode_utf8_lossy_matches_bun_exec_file_sync(name: str, data: bytes, code_points: list[int]) -> None:
    assert [ord(ch) for ch in decode_utf8_lossy(data)] == code_points


def test_decode_utf8_lossy_keeps_a_leading_bom() -> None:
    assert decode_utf8_lossy(b"\xef\xbb\xbf---\n") == "\ufeff---\n"


def test_exec_max_buffer_is_one_mib_inclusive() -> None:
    # Measured (bun 1.4.5), q3_maxbuf.js: 1,048,576 bytes are read, 1,048,577 throw ENOBUFS.
    assert EXEC_MAX_BUFFER == 1_048_576
    assert not exceeds_exec_max_buffer(1_048_576)
    assert exceeds_exec_max_buffer(1_048_577)


# --- replaceAll ----------------------------------------------------------------------------------

# Measured (bun 1.4.5), /tmp/quirks/q5_replaceall.js -> q5_bun.txt:
# (replacement, "A{X}B".replaceAll("{X}", r), "{X}-{X}".replaceAll("{X}", r))
MEASURED_REPLACE_ALL = [
    ("$$", "A$B", "$-$"),
    ("$&", "A{X}B", "{X}-{X}"),
    ("$`", "AAB", "-{X}-"),
    ("$'", "ABB", "-{X}-"),
    ("$1", "A$1B", "$1-$1"),
    ("$0", "A$0B", "$0-$0"),
    ("$01", "A$01B", "$01-$01"),
    ("$10", "A$10B", "$10-$10"),
    ("$<x>", "A$<x>B", "$<x>-$<x>"),
    ("$", "A$B", "$-$"),
    ("a$", "Aa$B", "a$-a$"),
    ("$$$", "A$$B", "$$-$$"),
    ("$$&", "A$&B", "$&-$&"),
    ("$x", "A$xB", "$x-$x"),
    ("[$&|$`|$'|$$|$1|$<x>|$]", "A[{X}|A|B|$|$1|$<x>|$]B", "[{X}||-{X}|$|$1|$<x>|$]-[{X}|{X}-||$|$1|$<x>|$]"),
    ("$&$&", "A{X}{X}B", "{X}{X}-{X}{X}"),
    ("$'$`", "ABAB", "-{X}-{X}-"),
]


@pytest.mark.parametrize(("replacement", "single", "multi"), MEASURED_REPLACE_ALL)
def test_js_replace_all_expands_dollar_patterns_as_bun_does(replacement: str, single: str, multi: str) -> None:
    assert js_replace_all("A{X}B", "{X}", replacement) == single
    # Every match's $` and $' are taken from the original subject, not the partly replaced one.
    assert js_replace_all("{X}-{X}", "{X}", replacement) == multi


def test_js_replace_all_without_a_match_returns_the_subject() -> None:
    assert js_replace_all("no variable", "{X}", "$&") == "no variable"


# --- git quoting ---------------------------------------------------------------------------------

ODD_NAMES = [
    b"plain.md",
    b"sp ace.md",
    b" lead.md",
    b"trail .md",
    b'quo"te.md',
    b"back\\slash.md",
    b"tab\tname.md",
    b"new\nline.md",
    "é.md".encode(),
    "日本.md".encode(),
    b"\xff\xfe-not-utf8.md",
    b"\x01ctl.md",
    b"del\x7f.md",
    b"bell\x07.md",
    b"bs\x08.md",
    b"vt\x0b.md",
    b"ff\x0c.md",
    b"cr\r.md",
    b"esc\x1b.md",
    b"star*?.md",
    b"dollar$.md",
    b"#hash.md",
    b"tilde~.md",
    b"apos'.md",
]


@pytest.fixture
def odd_name_listing(tmp_path: Path, git_env: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """(raw name, the line `git ls-tree -r --name-only HEAD` prints for it) for every ODD_NAMES file."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=repo, env=git_env, capture_output=True, check=True).stdout

    git("init", "-q")
    for name in ODD_NAMES:
        (repo / Path(name.decode("utf-8", "surrogateescape"))).write_bytes(b"x\n")
    git("add", "-A")
    git("commit", "-q", "-m", "odd names")
    raw = git("ls-tree", "-r", "-z", "--name-only", "HEAD").split(b"\0")[:-1]
    printed = git("ls-tree", "-r", "--name-only", "HEAD").split(b"\n")[:-1]
    assert sorted(raw) == sorted(ODD_NAMES)
    assert len(printed) == len(raw)
    return list(zip(raw, printed, strict=True))


def test_git_quoted_path_is_what_git_ls_tree_prints(odd_name_listing: list[tuple[bytes, bytes]]) -> None:
    mismatches = [
        (raw, printed, git_quoted_path(raw)) for raw, printed in odd_name_listing if git_quoted_path(raw) != printed
    ]
    assert mismatches == []


def test_git_quotes_path_exactly_when_git_ls_tree_quotes(odd_name_listing: list[tuple[bytes, bytes]]) -> None:
    for raw, printed in odd_name_listing:
        assert git_quotes_path(raw) == printed.startswith(b'"'), raw


def test_names_git_leaves_alone_include_spaces_and_shell_characters(odd_name_listing) -> None:
    unquoted = {raw for raw, printed in odd_name_listing if raw == printed}
    assert {b"sp ace.md", b" lead.md", b"trail .md", b"star*?.md", b"dollar$.md", b"apos'.md"} <= unquoted


# --- localeCompare -------------------------------------------------------------------------------


def test_locale_compare_key_orders_labels_like_bun() -> None:
    # Measured (bun 1.4.5, LANG=C.UTF-8 and also LANG=de_DE/LC_ALL=sv_SE: same result):
    # ["Zeta","alpha","_under","nel","\u0085nel"].sort((a, b) => a.localeCompare(b))
    words = ["Zeta", "alpha", "_under", "nel", "\u0085nel"]
    assert sorted(words, key=locale_compare_key) == ["\u0085nel", "_under", "alpha", "nel", "Zeta"]


# Measured (bun 1.4.5): the printable ASCII characters (U+0020..U+007E) sorted with localeCompare;
# no two compare equal.
MEASURED_ASCII_ORDER = (
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ"
)


def test_locale_compare_key_sorts_printable_ascii_like_bun() -> None:
    chars = [chr(c) for c in range(0x20, 0x7F)]
    random.Random(7).shuffle(chars)
    assert "".join(sorted(chars, key=locale_compare_key)) == MEASURED_ASCII_ORDER


def test_locale_compare_key_has_no_ties_among_printable_ascii() -> None:
    keys = [locale_compare_key(ch) for ch in MEASURED_ASCII_ORDER]
    assert all(a < b for a, b in itertools.pairwise(keys))


# Measured (bun 1.4.5): sign of a.localeCompare(b).
MEASURED_PAIRS = [
    ("a", "B", -1),
    ("B", "b", 1),  # lower case first
    ("file10", "file2", -1),  # not numeric
    ("a-b", "ab", -1),  # punctuation is not ignored
    ("a_b", "a-b", -1),
    ("human", "human-notes", -1),
    ("human/x", "human-notes", 1),
    ("persona", "Persona", -1),
    ("a b", "ab", -1),
    ("", "", 0),
    ("a\u0000b", "ab", 0),  # NUL is ignorable
    ("Z", "a", 1),
]


@pytest.mark.parametrize(("left", "right", "sign"), MEASURED_PAIRS)
def test_locale_compare_key_pairs_match_bun(left: str, right: str, sign: int) -> None:
    a, b = locale_compare_key(left), locale_compare_key(right)
    assert (a > b) - (a < b) == sign


# --- bun's // @bun pragma ------------------------------------------------------------------------


def test_bun_pragma_literal_reads_each_utf8_byte_as_latin1() -> None:
    # Measured (bun 1.4.5), /tmp/quirks/pragma.mjs: the literal "└── ├── │   é" in a `// @bun` module is
    # U+00E2 U+0094 U+0094 U+00E2 U+0094 U+0080 U+00E2 U+0094 U+0080 U+0020 U+00E2 U+0094 U+009C ...
    expected = [
        0xE2,
        0x94,
        0x94,
        0xE2,
        0x94,
        0x80,
        0xE2,
        0x94,
        0x80,
        0x20,
        0xE2,
        0x94,
        0x9C,
        0xE2,
        0x94,
        0x80,
        0xE2,
        0x94,
        0x80,
        0x20,
        0xE2,
        0x94,
        0x82,
        0x20,
        0x20,
        0x20,
        0xC3,
        0xA9,
    ]
    assert [ord(c) for c in bun_pragma_literal("└── ├── │   é")] == expected
    assert bun_pragma_literal("└── ") == "\u00e2\u0094\u0094\u00e2\u0094\u0080\u00e2\u0094\u0080 "


def test_bun_pragma_literal_leaves_ascii_alone() -> None:
    assert bun_pragma_literal("    ") == "    "


# --- dates ---------------------------------------------------------------------------------------

# One measurement per line, as measured: the formatter would split the long rows apart.
# fmt: off
# Measured (bun 1.4.5): upstream formatUtcTimestamp (letta-code 0.32.18) and Date#toISOString.
MEASURED_DATES = [
    (datetime(2026, 1, 2, 0, 0, 0, tzinfo=UTC), "2026-01-02 12:00:00 AM UTC+0000", "2026-01-02T00:00:00.000Z"),
    (datetime(2026, 1, 2, 0, 59, 59, 999000, tzinfo=UTC), "2026-01-02 12:59:59 AM UTC+0000", "2026-01-02T00:59:59.999Z"),  # noqa: E501
    (datetime(2026, 1, 2, 11, 59, 59, tzinfo=UTC), "2026-01-02 11:59:59 AM UTC+0000", "2026-01-02T11:59:59.000Z"),
    (datetime(2026, 1, 2, 12, 0, 0, tzinfo=UTC), "2026-01-02 12:00:00 PM UTC+0000", "2026-01-02T12:00:00.000Z"),
    (datetime(2026, 1, 2, 13, 5, 9, tzinfo=UTC), "2026-01-02 01:05:09 PM UTC+0000", "2026-01-02T13:05:09.000Z"),
    (datetime(2026, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), "2026-12-31 11:59:59 PM UTC+0000", "2026-12-31T23:59:59.999Z"),  # noqa: E501
    (datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC), "2026-01-02 03:04:05 AM UTC+0000", "2026-01-02T03:04:05.678Z"),
    (datetime(2026, 1, 2, 5, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2))), "2026-01-02 03:04:05 AM UTC+0000", "2026-01-02T03:04:05.678Z"),  # noqa: E501
    (datetime(2026, 1, 2, 3, 4, 5, 678900, tzinfo=UTC), "2026-01-02 03:04:05 AM UTC+0000", "2026-01-02T03:04:05.678Z"),
    # toISOString pads the year to 4 digits; formatUtcTimestamp prints getUTCFullYear() unpadded.
    (datetime(999, 3, 4, 5, 6, 7, tzinfo=UTC), "999-03-04 05:06:07 AM UTC+0000", "0999-03-04T05:06:07.000Z"),
]
# fmt: on


@pytest.mark.parametrize(("moment", "stamp", "iso"), MEASURED_DATES, ids=[m[2] for m in MEASURED_DATES])
def test_format_utc_timestamp_uses_a_12_hour_clock_like_upstream(moment: datetime, stamp: str, iso: str) -> None:
    assert format_utc_timestamp(moment) == stamp


@pytest.mark.parametrize(("moment", "stamp", "iso"), MEASURED_DATES, ids=[m[2] for m in MEASURED_DATES])
def test_to_iso_string_has_milliseconds_and_z(moment: datetime, stamp: str, iso: str) -> None:
    assert JsDate.from_datetime(moment).to_iso_string() == iso  # what the compiler writes as compiledAt


# --- hashing -------------------------------------------------------------------------------------


def test_sha256_of_a_lone_surrogate_hashes_the_replacement_character() -> None:
    # Measured (bun 1.4.5): createHash("sha256").update("\ud800").digest("hex")
    measured = "83d544ccc223c057d2bf80d3f2a32982c32c3c0db8e2674820da5064783fb097"
    assert sha256_hex_of_js_string("\ud800") == measured == hashlib.sha256(b"\xef\xbf\xbd").hexdigest()


@pytest.mark.parametrize(
    ("text", "measured"),
    [
        ("a\udc00b", "05087813392efc16fe8ff448920c6328e53af865df39419436659d9ffda90f7b"),
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (
            "You are a helpful agent.\n\n{CORE_MEMORY}",
            "d82c8e8ba7e9fe012df5760c1ae3da1e5f31f9a0af8ec58d271078544074d52c",
        ),
        ("\U0001f600", "f0443a342c5ef54783a111b51ba56c938e474c32324d90c3a60c9c8e3a37e2d9"),
    ],
)
def test_sha256_hex_of_js_string_matches_bun_create_hash(text: str, measured: str) -> None:
    # Measured (bun 1.4.5): createHash("sha256").update(text).digest("hex")
    assert sha256_hex_of_js_string(text) == measured


# --- re-measurement against the real bun ---------------------------------------------------------


@pytest.mark.integration
def test_locale_compare_key_agrees_with_bun_on_random_printable_ascii_labels(reference_bun: Path) -> None:
    from upstream_oracle import run_bun_script

    rng = random.Random(20260101)
    alphabet = "abcAB_-./ 0129zZ~$#"
    pairs = [
        ["".join(rng.choices(alphabet, k=rng.randint(0, 6))), "".join(rng.choices(alphabet, k=rng.randint(0, 6)))]
        for _ in range(3000)
    ]
    script = (
        "const pairs = JSON.parse(await Bun.stdin.text());\n"
        "process.stdout.write(JSON.stringify(pairs.map(([a, b]) => Math.sign(a.localeCompare(b)))));\n"
    )
    signs = run_bun_script(reference_bun, script, pairs)
    disagreements = []
    for (left, right), sign in zip(pairs, signs, strict=True):
        a, b = locale_compare_key(left), locale_compare_key(right)
        if (a > b) - (a < b) != sign:
            disagreements.append((left, right, sign))
    assert disagreements == []


@pytest.mark.integration
def test_js_trim_set_agrees_with_bun(reference_bun: Path) -> None:
    from upstream_oracle import run_bun_script

    script = (
        "const cps = JSON.parse(await Bun.stdin.text());\n"
        "process.stdout.write(JSON.stringify(cps.filter((c) => { const ch = String.fromCodePoint(c);"
        " return (ch + 'x' + ch).trim() === 'x'; })));\n"
    )
    assert set(run_bun_script(reference_bun, script, PROBED)) == MEASURED_TRIM_SET
