"""What a request line is: JSON text every implementation can parse, or a harness bug.

Owns `encode_request`, the one serialisation of the requests the harness sends (JSON-lines children:
the references, `cmd:` programs, the Letta server's driver) and checks (`check_request`: the port in
process and its command line, which read no line): `ensure_ascii` (a lone surrogate travels as its
`\\udXXX` escape, docs/protocol.md) and `allow_nan=False` (JSON has no NaN or Infinity; Python's default
would write `NaN`, which JSON.parse refuses, and the case would end as a protocol error blaming the
reference). A request that cannot be written is `UnreadableRequest`: the harness built it, so its outcome
carries `harness_bug` and the verdict blames the harness (harness.verdict.judge), never the reference or
the implementation. Cases cannot get there (harness.cases.inputs.non_finite_at refuses them at load time);
this is the guard for every other way a request is built (the fuzzer, diff-repo, a harness bug).
"""

from __future__ import annotations

import json
from typing import Any

from harness.cases.inputs import non_finite_at
from harness.core.model import Outcome

HARNESS_BUG = (
    "the harness built a request no implementation can read (a harness bug, not the reference's or the "
    "implementation's)"
)


class UnreadableRequest(ValueError):
    """A request no JSON parser can read; the message names the field at fault."""


def encode_request(payload: dict[str, Any]) -> bytes:
    """One request line (without its newline), ASCII JSON; raises UnreadableRequest for a value JSON cannot hold."""
    try:
        return json.dumps(payload, ensure_ascii=True, allow_nan=False).encode("ascii")
    except (ValueError, TypeError, RecursionError) as error:
        raise UnreadableRequest(f"{HARNESS_BUG}: {_why(payload, error)}") from None


def check_request(payload: dict[str, Any]) -> Outcome | None:
    """For a runner that reads no line: the harness-bug outcome `encode_request` would raise, or None."""
    try:
        encode_request(payload)
    except UnreadableRequest as error:
        return unreadable_outcome(error)
    return None


def unreadable_outcome(error: UnreadableRequest) -> Outcome:
    """The outcome of a request that was never sent: an error the verdict lays on the harness."""
    return Outcome("error", error=str(error), harness_bug=True)


def _why(payload: dict[str, Any], error: Exception) -> str:
    where = non_finite_at(payload)
    if where is not None:
        value: Any = payload
        for part in where:
            value = value[part]
        return f"{'/'.join(map(str, where))} is {value!r}, which JSON cannot hold (no NaN or Infinity)"
    return f"{type(error).__name__}: {error}"
