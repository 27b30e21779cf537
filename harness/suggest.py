"""The nearest known name to a misspelt one, for every "did you mean" the harness prints (standard library only).

One rule, difflib's ratio with its default cutoff, for the keys and values of a case or an expectations file,
tags, command-line options, pinned references and profile names alike; each caller words the hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def nearest(word: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to `word` (difflib.get_close_matches, ties to the earlier choice), or None when `word`
    is not text or nothing is close enough."""
    if not isinstance(word, str):
        return None
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return near[0] if near else None
