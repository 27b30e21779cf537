"""What a compile request's inputs may be, decided by the harness for every implementation under test.

Owns four rules. How a case's text becomes a JavaScript string (`js_string`, `js_value`: UTF-16 code units, a
high+low surrogate pair one character as JSON.parse reads the escapes `\\ud83e\\udd80`, a lone surrogate
kept), applied to every string of a case's `inputs` and `steps` at load time, so the port in process, a `cmd:`
program and the reference are given one value. Which values no request can carry (`non_finite_at`: NaN and the
infinities, anywhere; JSON has no form for them). Which clock strings a request may carry (`clock_error`: the
ISO 8601 forms JavaScript's `new Date(text)` reads the same in bun and node, Invalid Dates included, never a
string that reaches Date's implementation-specific fallback parser) and which numbers (`parse_json_number`: a
finite JSON number, kept as written). Cases (`inputs.now`, a step's `clock`), `diff-repo`'s options and the
fuzzer's inputs are checked here, not by the code under test: an implementation must not choose the requests
it is judged on. The Python port reads the same forms (memfs_prompt.jsvalues.parse_js_date);
tests/test_case_rules.py checks the two agree.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# `YYYY`, `YYYY-MM`, `YYYY-MM-DD` or a signed six-digit year, then optionally `T`/`t`, `HH:mm`, `:ss`, `.`
# and any number of fraction digits, and `Z`/`z`, `±HH:mm` or `±HHmm`.
_ISO_FORM = re.compile(
    r"(?:\d{4}|(?P<ysign>[+-])(?P<year6>\d{6}))"
    r"(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?P<time>[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?",
    re.ASCII,
)
FORMS = "YYYY-MM-DDTHH:mm:ss.sssZ and its shorter forms, six-digit years, offsets"


def clock_error(text: str) -> str | None:
    """Why `text` is not a clock a request may carry, or None when it is one.

    A form outside the pattern above, or a date part out of range (month 0 or 13, day 0 or 32, year
    `-000000`) with no time part after it, is read by Date's fallback parser, where runtimes differ
    (`Jan 2 2026`, `2026/01/02`, `2026-13`); with a time part the same date is an Invalid Date in both,
    which is a clock like any other (upstream's compile throws on it).
    """
    found = _ISO_FORM.fullmatch(text)
    if found is None:
        return (
            f"{text!r} is not an ISO 8601 date-time string ({FORMS}); "
            "JavaScript's Date reads any other string with an implementation-specific fallback parser"
        )
    month, day = int(found["month"] or 1), int(found["day"] or 1)
    negative_zero = found["ysign"] == "-" and int(found["year6"]) == 0
    if found["time"] is None and (not 1 <= month <= 12 or not 1 <= day <= 31 or negative_zero):
        return f"{text!r}: an invalid ISO date without a time, read by JavaScript's fallback Date parser"
    return None


_FIELDS = re.compile(
    r"[+-]?(?P<year>\d{4,6})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:[Tt](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?:[Zz]|(?P<sign>[+-])(?P<oh>\d{2}):?(?P<om>\d{2}))?)?",
    re.ASCII,
)
_MAX_MS = 8.64e15  # ECMAScript's TimeClip: the instants a Date can hold


def is_invalid_date(text: str) -> bool:
    """Whether a clock `clock_error` accepts is an Invalid Date to `new Date(text)`: a field out of its range
    (month 13, day 32, 25 o'clock, 24:00 with minutes), an offset out of range, or an instant past TimeClip.
    A day the month lacks is not one: `2026-02-30` is 2 March."""
    found = _FIELDS.fullmatch(text)
    if found is None or clock_error(text):
        return False
    if text.startswith("-") and int(found["year"]) == 0:
        return True  # -000000 is no year (ECMAScript's date-time string format)
    year = int(found["year"]) * (-1 if text.startswith("-") else 1)
    month, day = int(found["month"] or 1), int(found["day"] or 1)
    hour, minute, second = (int(found[k] or 0) for k in ("hour", "minute", "second"))
    fraction = found["fraction"] or ""
    if not 1 <= month <= 12 or not 1 <= day <= 31:  # 30 February is 2 March, as JavaScript reads it
        return True
    if hour > 24 or minute > 59 or second > 59 or (hour == 24 and (minute or second or fraction.strip("0"))):
        return True
    if found["oh"] is not None and (int(found["oh"]) > 23 or int(found["om"]) > 59):
        return True
    offset = (int(found["oh"] or 0) * 60 + int(found["om"] or 0)) * (-1 if found["sign"] == "-" else 1)
    days = _days_from_civil(year, month, day)
    ms = ((days * 24 + hour) * 60 + minute - offset) * 60_000 + second * 1000 + int((fraction + "000")[:3])
    return abs(ms) > _MAX_MS


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def parse_json_number(text: str) -> int | float:
    """`text` as a request's `previousMessageCount`: a finite JSON number, as written (3 stays 3, 3.0 stays 3.0;
    the implementation reads it as a JS number). ValueError says why it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{text!r} is not a number (a JSON number such as 3, 3.0, -5 or 1e21)")
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number, so no request can carry it (JSON has no NaN or Infinity)")
    return value


def js_string(text: str) -> str:
    """`text` as the JavaScript string a request gives every implementation: its UTF-16 code units, read back
    as JSON.parse reads `\\uXXXX` escapes. A high surrogate followed by a low one is one character (YAML's
    `"\\ud83e\\udd80"` is U+1F980, as `"\\U0001F980"` is); any other surrogate stays the lone code unit it is.
    So the Python string handed to the port in process is the one a JSON parser reads from the wire."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def js_value(value: Any) -> Any:
    """`value` (a YAML/JSON value) with every string in it, mapping keys included, made a `js_string`."""
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, dict):
        return {js_string(key) if isinstance(key, str) else key: js_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [js_value(item) for item in value]
    return value


def non_finite_at(value: Any, where: tuple[str | int, ...] = ()) -> tuple[str | int, ...] | None:
    """Where the first NaN or infinity in `value` is (a path of keys and indexes), or None when there is none.
    No JSON text can hold one (Python's json.dumps would write `NaN`, which JSON.parse refuses)."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite_at(item, (*where, key))
        if found is not None:
            return found
    return None
