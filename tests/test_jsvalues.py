"""memfs_prompt.jsvalues against the runtimes themselves: thousands of generated numbers and date strings,
each evaluated by bun (the reference runtime) and node in one process, and by the port.

Skipped where a runtime is missing. The generated inputs are seeded, so a failure names its input.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from memfs_prompt.jsvalues import (
    JsDate,
    JsRangeError,
    UnsupportedJsValue,
    format_utc_timestamp,
    js_number,
    js_number_to_string,
    parse_js_date,
)

BUN = Path.home() / ".cache" / "letta-conformance" / "bun" / "1.4.5" / "package" / "bin" / "bun"
RUNTIMES = {"bun": str(BUN) if BUN.exists() else None, "node": shutil.which("node")}

EVALUATE = r"""
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const pad2 = (v) => v.toString().padStart(2, "0");
const stamp = (date) => {
  const hours = date.getUTCHours();
  const day = `${date.getUTCFullYear()}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}`;
  const time = `${pad2(hours % 12 || 12)}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}`;
  return `${day} ${time} ${hours < 12 ? "AM" : "PM"} UTC+0000`;
};
const numbers = input.numbers.map((text) => `${JSON.parse(text)}`);
const dates = input.dates.map((text) => {
  const date = new Date(text);
  let iso = null;
  try { iso = date.toISOString(); } catch (error) { iso = null; }
  return [Number.isNaN(date.getTime()) ? null : date.getTime(), iso, stamp(date)];
});
process.stdout.write(JSON.stringify({ numbers, dates }));
"""


def evaluate(runtime: str, numbers: list[str], dates: list[str]) -> dict:
    binary = RUNTIMES[runtime]
    if binary is None:
        pytest.skip(f"{runtime} is not installed")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TZ": "UTC", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
    done = subprocess.run(
        [binary, "-e", EVALUATE],
        input=json.dumps({"numbers": numbers, "dates": dates}).encode(),
        capture_output=True,
        env=env,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


# --- generated inputs --------------------------------------------------------------------------------


def generated_numbers(seed: int, count: int) -> list[str]:
    """JSON number texts: integers around 2^53 and 1e21, random doubles of every exponent, decimals."""
    rng = random.Random(seed)
    texts = [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "3.0",
        "1e21",
        "1e+21",
        "1e20",
        "123456789012345678901",
        "9007199254740993",
        "9007199254740992",
        "-9007199254740993",
        "1e-6",
        "1e-7",
        "0.000001",
        "0.0000001",
        "1.5e300",
        "5e-324",
        "1e309",
        "-1e309",
        "2.5",
        "100",
        "1E3",
        "18446744073709551616",
        "4.35",
        "0.1",
        "-42",
    ]
    while len(texts) < count:
        kind = rng.randrange(5)
        if kind == 0:
            texts.append(str(rng.randrange(-(2**70), 2**70)))
        elif kind == 1:
            texts.append(
                str(2**53 + rng.randrange(-64, 64)) if rng.random() < 0.5 else str(10 ** rng.randrange(15, 25))
            )
        elif kind == 2:
            bits = rng.getrandbits(64)
            x = struct.unpack("<d", struct.pack("<Q", bits))[0]
            if math.isfinite(x):
                texts.append(repr(x))
        elif kind == 3:
            texts.append(f"{rng.randrange(1, 10 ** rng.randrange(1, 18))}e{rng.randrange(-30, 30)}")
        else:
            texts.append(f"{rng.randrange(0, 10**6)}.{rng.randrange(0, 10 ** rng.randrange(1, 20))}")
    return texts


def _two(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randrange(low, high):02d}"


def generated_dates(seed: int, count: int) -> list[str]:
    """Date strings of the modelled grammar with fields in and out of range, and near misses outside it."""
    rng = random.Random(seed)
    out = [
        "2026-02-30T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "+275760-09-13T00:00:00Z",
        "-271821-04-20T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "-000000-01-01T00:00:00Z",
        "2026-01-01T00:00:00.9999Z",
        "garbage",
        "",
    ]
    while len(out) < count:
        if rng.random() < 0.8:
            year = f"{rng.randrange(0, 10000):04d}"
        else:
            year = rng.choice("+-") + f"{rng.choice([0, 1, 10000, 275760, 271821, 275759, rng.randrange(10**6)]):06d}"
        text = year
        if rng.random() < 0.9:
            text += "-" + _two(rng, 0, 14)
            if rng.random() < 0.9:
                text += "-" + rng.choice([_two(rng, 0, 33), _two(rng, 27, 32)])
        if rng.random() < 0.85:
            text += rng.choice("TTTTt ") + rng.choice([_two(rng, 0, 26), "24", "23"]) + ":" + _two(rng, 0, 61)
            if rng.random() < 0.85:
                text += ":" + _two(rng, 0, 62)
                if rng.random() < 0.6:
                    text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 12)))
            zone = rng.randrange(4)
            if zone == 0:
                text += rng.choice("Zz")
            elif zone == 1:
                text += rng.choice("+-") + _two(rng, 0, 26) + rng.choice([":", ""]) + _two(rng, 0, 61)
        out.append(text)
    return out


# --- numbers -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ["bun", "node"])
def test_number_to_string_matches_the_runtime_on_generated_numbers(runtime: str) -> None:
    texts = generated_numbers(17, 5000)
    printed = evaluate(runtime, texts, [])["numbers"]
    mismatches = [
        (t, p, js_number_to_string(json.loads(t)))
        for t, p in zip(texts, printed, strict=True)
        if js_number_to_string(json.loads(t)) != p
    ]
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (2**53 + 1, "9007199254740992"),
        (10**21, "1e+21"),
        (10**20, "100000000000000000000"),
        (3.0, "3"),
        (-0.0, "0"),
        (-5, "-5"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (-float("inf"), "-Infinity"),
        (10**400, "Infinity"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_number_to_string_quirks(value: float, printed: str) -> None:
    assert js_number_to_string(value) == printed


def test_json_integers_become_the_nearest_double() -> None:
    assert js_number(2**53 + 1) == 2**53 and js_number(2**53 + 3) == 2**53 + 4  # ties to even
    with pytest.raises(TypeError):
        js_number(True)


# --- dates -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ["bun", "node"])
def test_new_date_matches_the_runtime_on_generated_strings(runtime: str) -> None:
    texts = generated_dates(23, 6000)
    answers = evaluate(runtime, [], texts)["dates"]
    modelled = mismatches = 0
    bad = []
    for text, (time, iso, stamp) in zip(texts, answers, strict=True):
        try:
            date = parse_js_date(text)
        except UnsupportedJsValue:
            continue
        modelled += 1
        try:
            port_iso: str | None = date.to_iso_string()
        except JsRangeError:
            port_iso = None
        port_time = None if not date.valid else int(date.time)
        if (port_time, port_iso, format_utc_timestamp(date)) != (time, iso, stamp):
            mismatches += 1
            bad.append((text, (time, iso, stamp), (port_time, port_iso, format_utc_timestamp(date))))
    assert modelled > 4500
    assert not bad, bad[:10]


def test_invalid_dates_throw_as_to_iso_string_does() -> None:
    with pytest.raises(JsRangeError, match="Invalid Date"):
        parse_js_date("2026-01-32T00:00:00Z").to_iso_string()


def test_strings_outside_the_model_are_refused_clearly() -> None:
    with pytest.raises(UnsupportedJsValue, match="not a date-time string the port models"):
        parse_js_date("Jan 2 2026")


def test_a_datetime_becomes_the_same_date() -> None:
    from datetime import UTC, datetime

    moment = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert JsDate.from_datetime(moment).to_iso_string() == "2026-01-02T03:04:05.678Z"
    assert JsDate.from_datetime(datetime(1, 1, 1, tzinfo=UTC)).to_iso_string() == "0001-01-01T00:00:00.000Z"
