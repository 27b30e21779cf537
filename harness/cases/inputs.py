"""What a compile request's inputs may be, decided by the harness for every implementation under test.

Owns two rules: which clock strings a request may carry (`clock_error`: the ISO 8601 forms JavaScript's
`new Date(text)` reads the same in bun and node, Invalid Dates included, never a string that reaches
Date's implementation-specific fallback parser) and which numbers (`parse_json_number`: a finite JSON
number, kept as written). Cases (`inputs.now`, a step's `clock`), `diff-repo`'s options and the fuzzer's
inputs are checked here, not by the code under test: an implementation must not choose the requests it
is judged on. The Python port reads the same forms (memfs_prompt.jsvalues.parse_js_date);
tests/test_case_rules.py checks the two agree.
"""

from __future__ import annotations

import json
import math
import re

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
