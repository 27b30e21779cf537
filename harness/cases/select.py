"""`-k` expressions as pytest reads them: words joined by `and`, `or`, `not` and parentheses.

A word matches a case when it is one of its tags or part of its id; a comma is `or` (what `-k` took
before expressions). Parsed once, so a malformed expression is refused before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_TOKEN = re.compile(r"\s*(\(|\)|,|[^\s(),]+)")
Matcher = Callable[[str, tuple[str, ...]], bool]


class Keyword:
    """A compiled `-k` expression; `matches(id, tags)`."""

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

    def matches(self, case_id: str, tags: Iterable[str]) -> bool:
        return self._match(case_id, tuple(tags))

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
        return parts[0] if len(parts) == 1 else lambda i, t: any(p(i, t) for p in parts)

    def _and(self) -> Matcher:
        parts = [self._not()]
        while self._peek() == "and":
            self._take()
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else lambda i, t: all(p(i, t) for p in parts)

    def _not(self) -> Matcher:
        if self._peek() == "not":
            self._take()
            inner = self._not()
            return lambda i, t: not inner(i, t)
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
        return lambda i, t: token in i or token in t
