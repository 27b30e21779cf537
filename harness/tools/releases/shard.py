"""Splitting the corpus into deterministic shards: `conformance run --shard K/N`.

A case belongs to shard `1 + int(sha256(case id)[:8 bytes]) mod N`. Membership depends on the
case id alone, so a case lands in the same shard on every machine and in every run, whatever
else is selected (paths, `-k`) and when other cases are added or removed; for one N the
shards partition any selection (every case in exactly one). Sizes are even only on average:
a hash, unlike round-robin over sorted ids, does not move cases between shards when the
corpus changes. Merge the shards' reports with `conformance merge-reports`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


class HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=HasId)


def shard_of(case_id: str, count: int) -> int:
    """The shard (1..count) that holds `case_id`."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise ValueError(f"--shard {text!r}: write K/N, e.g. 1/4 for the first of four shards")
        index, count = int(match[1]), int(match[2])
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"--shard {text!r}: K must be between 1 and N (N at least 1)")
        return cls(index, count)

    def holds(self, case_id: str) -> bool:
        return shard_of(case_id, self.count) == self.index

    def select(self, items: Iterable[T]) -> list[T]:
        return [item for item in items if self.holds(item.id)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def partition(items: Sequence[T], count: int) -> list[list[T]]:
    """All `count` shards of `items`, in order (shard 1 first)."""
    return [Shard(index, count).select(items) for index in range(1, count + 1)]
