"""Which cases `-k` selects, the one rule of `conformance run/list/matrix/history -k` and `pytest cases -k`.

An expression is words joined by `and`, `or`, `not` and parentheses (a comma is `or`, what `-k` took
before expressions), parsed once, so a malformed one is refused before anything runs. A word matches a
case as pytest matches an item: it is part of one of the case's names, whatever the case (`case_names`:
its id, its tags, its file's name and its folders from `cases/` down). The pytest plugin makes each tag a
marker of its item, so pytest's own `-k` sees the same names (and `-m TAG` selects by tag).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from harness.core.model import Scenario

_TOKEN = re.compile(r"\s*(\(|\)|,|[^\s(),]+)")
Matcher = Callable[[tuple[str, ...]], bool]


def case_names(scenario: Scenario) -> tuple[str, ...]:
    """The names a `-k` word is matched against, lowercased: the names pytest gives the case's item (its id,
    its file's name, the folders from `cases/` down to it) and its tags (markers of the item)."""
    folders = scenario.path.parent.parts
    start = len(folders) - 1 - folders[::-1].index("cases") if "cases" in folders else len(folders) - 1
    names = (scenario.id, scenario.path.name, *folders[start:], *scenario.tags)
    return tuple(name.lower() for name in names)


class Keyword:
    """A compiled `-k` expression; `matches(case_names(scenario))`, `select(scenarios)`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._tokens = self._tokenize(text)
        self._pos = 0
        if not self._tokens:
            raise ValueError(f"-k {text!r}: an empty expression")
        self._match = self._or()
        if self._pos != len(self._tokens):
            raise ValueError(f"-k {text!r}: unexpected {self._tokens[self._pos]!r}")

    def __bool__(self) -> bool:
        return True

    def __str__(self) -> str:
        return self.text

    def matches(self, names: Iterable[str]) -> bool:
        """Whether a case with these names (`case_names`) is selected."""
        return self._match(tuple(name.lower() for name in names))

    def select(self, scenarios: Iterable[Scenario]) -> list[Scenario]:
        return [s for s in scenarios if self.matches(case_names(s))]

    @staticmethod
    def _tokenize(text: str) -> list[str]:
        tokens, pos = [], 0
        while pos < len(text):
            found = _TOKEN.match(text, pos)
            if not found:
                break
            tokens.append(found.group(1))
            pos = found.end()
        return tokens

    def _peek(self) -> str | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise ValueError(f"-k {self.text!r}: ends where a word or `(` was expected")
        self._pos += 1
        return token

    def _or(self) -> Matcher:
        parts = [self._and()]
        while self._peek() in ("or", ","):
            self._take()
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else lambda names: any(p(names) for p in parts)

    def _and(self) -> Matcher:
        parts = [self._not()]
        while self._peek() == "and":
            self._take()
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else lambda names: all(p(names) for p in parts)

    def _not(self) -> Matcher:
        if self._peek() == "not":
            self._take()
            inner = self._not()
            return lambda names: not inner(names)
        return self._atom()

    def _atom(self) -> Matcher:
        token = self._take()
        if token == "(":
            inner = self._or()
            if self._take() != ")":
                raise ValueError(f"-k {self.text!r}: a `(` is not closed")
            return inner
        if token in (")", ",", "and", "or"):
            raise ValueError(f"-k {self.text!r}: unexpected {token!r}")
        word = token.lower()  # pytest's -k is case-insensitive
        return lambda names: any(word in name for name in names)
