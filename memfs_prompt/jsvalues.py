"""Compile inputs as the JavaScript values upstream holds: numbers and Dates (issue 17, family 3).

Upstream prints `previousMessageCount` with a template literal (`Number.prototype.toString`) and turns
the clock string into `new Date(string)` in the reference's runtime; `compiledAt` is then
`date.toISOString()`, which throws for an Invalid Date. Each function names the quirk it reproduces;
`tests/test_jsvalues.py` measures them against bun and node on generated inputs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from .errors import UpstreamError

# --- numbers ---------------------------------------------------------------------------------------


def js_number(value: int | float) -> float:
    """The JS number a JSON number (or a Python int) becomes: the nearest double, ties to even, and
    ±Infinity past the largest double, as `JSON.parse` reads `9007199254740993` as 9007199254740992."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number here")
    if isinstance(value, int):
        return float(Decimal(value))  # correctly rounded; overflows to inf instead of raising
    return float(value)


def js_number_to_string(value: int | float) -> str:
    """`Number.prototype.toString()` / `${n}` (ECMA-262 Number::toString, radix 10).

    Shortest round-trip digits (Python's repr finds the same ones); plain notation for exponents from
    -6 to 20 (`1e21` is the first number printed with an exponent: `1e+21`), `-0` prints `0`,
    `NaN`, `Infinity`, `-Infinity`.
    """
    x = js_number(value)
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number_to_string(-x)
    if math.isinf(x):
        return "Infinity"
    _, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)  # the zeros stripped
    digits = digits.lstrip("0")
    k = len(digits)
    n = exponent + k  # the decimal point sits after n digits
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


# --- dates -----------------------------------------------------------------------------------------

MS_PER_DAY = 86_400_000
MAX_TIME = 8.64e15  # ECMA-262 TimeClip: |t| <= 8.64e15 ms, else NaN


class UnsupportedJsValue(ValueError):
    """An input the port does not model (a string `new Date` may read through its legacy parser)."""


class JsRangeError(UpstreamError):
    """What upstream throws: `toISOString()` of an Invalid Date (bun: `RangeError: Invalid Date`;
    node says `Invalid time value`)."""


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year; month 1..12, day may roll over)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


@dataclass(frozen=True)
class JsDate:
    """A JS Date: a time value in milliseconds since the epoch (UTC), NaN for an Invalid Date."""

    time: float

    @classmethod
    def from_datetime(cls, moment: datetime) -> JsDate:
        """The Date a Python datetime names (a naive one is taken as UTC), to the millisecond below."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
        return cls(float(delta.days * MS_PER_DAY + delta.seconds * 1000 + delta.microseconds // 1000))

    @property
    def valid(self) -> bool:
        return not math.isnan(self.time)

    def utc_fields(self) -> tuple[int, int, int, int, int, int, int]:
        """getUTCFullYear, getUTCMonth()+1, getUTCDate, getUTCHours, getUTCMinutes, getUTCSeconds, ms."""
        t = int(self.time)
        days, ms = divmod(t, MS_PER_DAY)
        year, month, day = _civil_from_days(days)
        return year, month, day, ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000

    def to_iso_string(self) -> str:
        """`Date.prototype.toISOString()`: years 0..9999 as four digits, others as a signed six-digit year."""
        if not self.valid:
            raise JsRangeError("RangeError: Invalid Date")
        year, month, day, hours, minutes, seconds, ms = self.utc_fields()
        year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
        return f"{year_text}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}Z"


_ISO_DATE = re.compile(
    r"(?:(?P<year4>\d{4})|(?P<ysign>[+-])(?P<year6>\d{6}))"
    r"(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:[Tt](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?:(?P<zulu>[Zz])|(?P<osign>[+-])(?P<ohour>\d{2}):?(?P<ominute>\d{2}))?)?",
    re.ASCII,
)


def parse_js_date(text: str, local_offset_minutes: int = 0) -> JsDate:
    """`new Date(text)` as bun 1.4.5 (and node 22) read the ISO-8601-like forms, Invalid Date included.

    The modelled forms are `YYYY`, `YYYY-MM`, `YYYY-MM-DD` (or a signed six-digit year), optionally
    followed by `T`/`t`, `HH:mm`, `:ss`, `.` and any number of fraction digits, and `Z`/`z`,
    `±HH:mm` or `±HHmm`: the ES5 date-time format that V8's parser (which bun's agrees with) reads
    without its legacy fallback. Measured quirks (bun and node agree on every one):
    - a day up to 31 rolls over into the next month (`02-30` is March 2 or 1), 32 is invalid;
      month 0 or 13, day 0 are invalid;
    - `24:00` (seconds and fraction zero) is the next midnight, any other hour 24 is invalid;
      minute or second 60 is invalid;
    - fraction digits past the third are cut, not rounded (`.9999` is 999 ms), and past the ninth
      the leading zeros stop counting (`read_milliseconds`);
    - an offset hour up to 23 and minute up to 59;
    - years 0 and negative, and six-digit years, as far as TimeClip's ±8.64e15 ms; `-000000` is invalid
      (with a time part; without one the legacy parser reads it, so it is refused like a bad date
      without a time);
    - a date-time without an offset is local time (`local_offset_minutes`; the harness runs TZ=UTC),
      a date alone is UTC.
    Anything else raises UnsupportedJsValue: the legacy date parser reads many more strings
    (`Jan 2 2026`, `2026/01/02`, a space before the time, where `0064-10-31 00:00Z` is 1964).
    """
    match = _ISO_DATE.fullmatch(text)
    if match is None:
        raise UnsupportedJsValue(
            f"{text!r} is not a date-time string the port models (ISO 8601: YYYY-MM-DDTHH:mm:ss.sssZ and its "
            "shorter forms, six-digit years, offsets); upstream's Date parser may read it differently"
        )
    g = match.groupdict()
    month = int(g["month"]) if g["month"] else 1
    day = int(g["day"]) if g["day"] else 1
    date_is_valid = 1 <= month <= 12 and 1 <= day <= 31
    if g["year4"] is not None:
        year = int(g["year4"])
    else:
        year = int(g["year6"]) * (-1 if g["ysign"] == "-" else 1)
        if year == 0 and g["ysign"] == "-":
            date_is_valid = False
    if not date_is_valid:
        if g["hour"] is None:  # the ISO parser gives up before a time part: the legacy parser reads the rest
            raise UnsupportedJsValue(f"{text!r}: an invalid ISO date without a time, read by the legacy Date parser")
        return JsDate(math.nan)  # measured: with a `T` time part the legacy parser finds no date either
    hour = int(g["hour"]) if g["hour"] else 0
    minute = int(g["minute"]) if g["minute"] else 0
    second = int(g["second"]) if g["second"] else 0
    ms = read_milliseconds(g["fraction"] or "0")
    if minute > 59 or second > 59:
        return JsDate(math.nan)
    if hour > 24 or (hour == 24 and (minute or second or ms)):
        return JsDate(math.nan)
    if g["osign"]:
        ohour, ominute = int(g["ohour"]), int(g["ominute"])
        if ohour > 23 or ominute > 59:
            return JsDate(math.nan)
        offset = (ohour * 60 + ominute) * (-1 if g["osign"] == "-" else 1)
    elif g["zulu"] or g["hour"] is None:
        offset = 0
    else:
        offset = local_offset_minutes
    time = _days_from_civil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute - offset) * 60 + second) * 1000 + ms
    return JsDate(float(time) if abs(time) <= MAX_TIME else math.nan)


MAX_SIGNIFICANT_DIGITS = 9


def read_milliseconds(fraction: str) -> int:
    """The milliseconds of `.fraction` as V8's date parser (and bun's) reads them.

    The numeral is read as an integer of at most nine significant digits (leading zeros skipped), its
    length is the digit count (leading zeros included) capped at nine, and the first three digits of
    that length are kept: `.9999` is 999 ms, but `.0051234567` (ten digits) is 51 ms, not 5.
    """
    significant = fraction.lstrip("0")[:MAX_SIGNIFICANT_DIGITS]
    number = int(significant) if significant else 0
    length = min(len(fraction), MAX_SIGNIFICANT_DIGITS)
    if length < 3:
        return number * 10 ** (3 - length)
    return number // 10 ** (length - 3)


def format_utc_timestamp(date: JsDate) -> str:
    """Upstream `formatUtcTimestamp`: `${getUTCFullYear()}` (unpadded, `-1`, `10000`), two-digit fields,
    a 12-hour clock with `AM`/`PM` and a literal `UTC+0000`; an Invalid Date prints `NaN` fields,
    hour `12` (`NaN % 12 || 12`) and `PM`."""
    if not date.valid:
        return "NaN-NaN-NaN 12:NaN:NaN PM UTC+0000"
    year, month, day, hours, minutes, seconds, _ = date.utc_fields()
    hour12 = hours % 12 or 12
    meridiem = "AM" if hours < 12 else "PM"
    return f"{year}-{month:02d}-{day:02d} {hour12:02d}:{minutes:02d}:{seconds:02d} {meridiem} UTC+0000"


def as_js_date(moment: datetime | JsDate) -> JsDate:
    return moment if isinstance(moment, JsDate) else JsDate.from_datetime(moment)
