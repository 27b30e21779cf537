"""How two outcomes differ, coarsely: which fields, and what kind of difference in each.

Built on verdict.diff.outcome_diff, so whatever `run` calls a difference, `reduce` and `fuzz` do too.
A shrunk case must diverge "the same way" as the case it came from: against the same
reference, in the same fields, with the same kind of difference. The kind is deliberately
coarse (an order change, a whitespace-only change, text missing or extra on the implementation's side,
other text, a field one side lacks, a null against a value, a throw on one side, an implementation crash) so
that shrinking keeps the bug while its bytes change. Whether a side has a field at all is
FieldDiff's `*_present` (field_kind); a null it has is a value like any other (difference_kind).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.core.model import FieldDiff, Outcome
from harness.verdict.diff import outcome_diff

# What a "whitespace" difference may add or remove besides the Unicode separators (categories Z*): the
# C0 space controls and U+FEFF (JavaScript's trim strips them), the ones it leaves (U+001C..U+001F, U+0085:
# Python's strip takes them) and U+200B. A coarse kind, wider than any one language's trim on purpose.
_SPACE = frozenset("\t\n\v\f\r\ufeff\x1c\x1d\x1e\x1f\x85\u200b")


@dataclass(frozen=True)
class Signature:
    reference: str
    diffs: tuple[tuple[str, str], ...]  # (field, kind), sorted

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for f, _ in self.diffs)

    def describe(self) -> str:
        parts = ", ".join(f"{field} ({kind})" for field, kind in self.diffs)
        return f"{parts} against {self.reference}"


@functools.cache
def _spaces() -> re.Pattern[str]:
    """_SPACE and every separator (categories Z*) of this Python's Unicode, as one character class (built once,
    when a first difference needs it: matching it is C speed, where a per-character test was seconds on a
    megabyte value)."""
    # Unicode has assigned every separator in the BMP (the last, U+3000, in 1.1); scanning the astral planes too
    # took most of a second
    separators = (chr(n) for n in range(0x10000) if unicodedata.category(chr(n)).startswith("Z"))
    return re.compile("[" + "".join(re.escape(ch) for ch in sorted({*_SPACE, *separators})) + "]+")


def _without_space(text: str) -> str:
    return _spaces().sub("", text)


def difference_kind(reference: Any, impl: Any) -> str:
    """One word for how the implementation's value differs from the reference's, both present (None is a JSON
    null there; a side that lacks the field is field_kind's to say)."""
    if reference is None:
        return "null-in-reference"
    if impl is None:
        return "null-in-impl"
    if not isinstance(reference, str) or not isinstance(impl, str):
        return "value"
    return _text_kind(reference, impl)


@functools.lru_cache(maxsize=4096)
def _text_kind(reference: str, impl: str) -> str:
    """difference_kind of two strings, once per pair: a report asks it of each failing result several times
    (its cause, its group, its rule's representative), and a value may be megabytes."""
    if len(reference) == len(impl) and Counter(reference) == Counter(impl):  # the same characters (sorted equal)
        return "order"
    if _without_space(reference) == _without_space(impl):
        return "whitespace"
    if len(impl) < len(reference):
        return "impl-shorter"
    if len(impl) > len(reference):
        return "impl-longer"
    return "text"


def signature_of(reference_label: str, reference: Outcome, impl: Outcome) -> Signature | None:
    """None when both agree (or the reference could not run: that is no divergence of the implementation)."""
    if reference.status == "error":
        return None
    if impl.status == "error":
        crash = (impl.error or "").split(":", 1)[0] or "error"
        return Signature(reference_label, (("error", f"impl-crash:{crash}"),))
    if reference.status != impl.status:
        kind = "impl-threw" if impl.status == "thrown" else "reference-threw"
        return Signature(reference_label, (("thrown", kind),))
    if reference.status == "thrown":
        return None
    diffs = [(diff.field, field_kind(diff)) for diff in outcome_diff(reference, impl)]
    return Signature(reference_label, tuple(sorted(diffs))) if diffs else None


def field_kind(diff: FieldDiff) -> str:
    """The kind of one outcome_diff entry: absent on the side that lacks the field (`*_present`), else
    difference_kind of the two values (a null there is present, never called absent)."""
    if not diff.reference_present:
        return "absent-in-reference"
    if not diff.impl_present:
        return "absent-in-impl"
    return difference_kind(diff.reference, diff.impl)


def pick_divergence(
    signatures: Iterable[Signature | None], seen: set[Signature], target: list[Signature]
) -> tuple[Signature | None, int]:
    """What a fuzz example shows: the signature to stop on, and how many known signatures came before it.

    The first new signature becomes the `target`; while Hypothesis shrinks, only that one counts.
    """
    known = 0
    for signature in signatures:
        if signature is None:
            continue
        if signature in seen:
            known += 1
            continue
        if not target:
            target.append(signature)
        if signature == target[0]:
            return signature, known
    return None, known
