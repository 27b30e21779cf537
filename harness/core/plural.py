"""How a count reads to people: `1 result`, `2 results`, `0 golden checks` (standard library only)."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count noun`, the noun in its plural unless the count is 1 (`plural`, else -es after s, x, sh or ch, else -s)."""
    if count == 1:
        return f"{count} {noun}"
    if plural is None:
        plural = noun + ("es" if noun.endswith(("s", "x", "sh", "ch")) else "s")
    return f"{count} {plural}"
