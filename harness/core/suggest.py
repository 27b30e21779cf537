"""The nearest known name to a misspelt one, for every "did you mean" the harness prints (standard library only).

One rule for the keys and values of a case or an expectations file, tags, command-line options, pinned
references and profile names alike: a choice is a candidate when difflib finds it similar enough (its ratio, at
`cutoff`), and the candidates rank by how many typing slips turn the word into them (a character added, dropped,
changed, or two neighbours swapped), then by how far their lengths differ, then by difflib's ratio, then by
their order (a caller lists the likelier first: references newest first). So `0.34.21` is taken for `0.34.12`
(two digits swapped, one slip) rather than `0.34.2` (a length apart) or `0.34.11` (an older release). Each caller
words the hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def nearest(word: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to `word`, or None when `word` is not text or no choice is similar enough."""
    if not isinstance(word, str):
        return None
    similar = [
        (difflib.SequenceMatcher(None, word, choice).ratio(), index, choice)
        for index, choice in enumerate(dict.fromkeys(choices))
    ]
    candidates = [(slips(word, c), abs(len(word) - len(c)), -ratio, i, c) for ratio, i, c in similar if ratio >= cutoff]
    return min(candidates)[-1] if candidates else None


def slips(word: str, other: str) -> int:
    """The fewest typing slips from `word` to `other`: a character inserted, deleted or replaced, or two
    neighbours swapped (the optimal string alignment distance)."""
    previous2: list[int] = []
    previous = list(range(len(other) + 1))
    for i, a in enumerate(word, 1):
        row = [i] + [0] * len(other)
        for j, b in enumerate(other, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == other[j - 2] and word[i - 2] == b:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[-1]
