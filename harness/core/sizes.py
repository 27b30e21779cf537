"""A size as people write it (`512M`, `2G`): the bound of the result store and of the transpiler cache."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`512M`, `2G`, `64k`, `1048576` (bytes; K/M/G/T are powers of 1024) -> bytes; ValueError otherwise."""
    found = _SIZE.match(text)
    if not found:
        raise ValueError(f"{text!r} is not a size: give bytes or a number with K, M, G or T (512M, 2G)")
    number, unit = found.groups()
    return int(float(number) * 1024 ** " kmgt".index(unit.lower()))
