"""`python -m memfs_prompt serve`: the protocol's JSON-lines transport around `memfs_prompt.protocol.Server`.

One request per line on stdin, split on b"\\n" only (JSON text may hold U+2028, U+0085, ...); a line
that is blank (JavaScript's `trim()`) is skipped and a last line without "\\n" is never read, as
reference/driver.mjs does. Each answer is one line of `json.dumps(..., ensure_ascii=True)` (so a lone
surrogate travels as `\\udXXX`), flushed at once. A bad line is answered (`ok: false, error`; `id`
null when the line is not a JSON object), never the end of the loop; the loop ends at end of input.
While it runs, anything else printed to sys.stdout goes to stderr: stdout carries answers only.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Mapping
from typing import Any, BinaryIO

from .profiles import DEFAULT, Profile
from .protocol import Server
from .quirks import js_trim


def answer_line(server: Server, line: bytes) -> dict[str, Any] | None:
    """The answer to one request line (without its "\\n"), or None for a blank line."""
    text = line.decode("utf-8", "replace")  # as the driver's TextDecoder: a bad byte is U+FFFD
    if not js_trim(text):
        return None
    try:
        request = json.loads(text)
    except (ValueError, RecursionError) as error:
        return {"id": None, "ok": False, "error": f"request is not JSON: {error}"}
    return server.handle(request)


def encode_answer(answer: dict[str, Any]) -> bytes:
    """One answer line: ASCII JSON and "\\n" (an answer that cannot be encoded becomes an error answer)."""
    try:
        text = json.dumps(answer, ensure_ascii=True)
    except (TypeError, ValueError) as error:
        text = json.dumps({"id": answer.get("id"), "ok": False, "error": f"answer is not JSON: {error}"})
    return text.encode("ascii") + b"\n"


def serve(server: Server, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer every complete line of `stdin` on `stdout` until end of input."""
    for line in stdin:  # a binary stream's lines end at b"\n" only
        if not line.endswith(b"\n"):
            break  # cut short: the driver never answers an unterminated line either
        answer = answer_line(server, line[:-1])
        if answer is None:
            continue
        stdout.write(encode_answer(answer))
        stdout.flush()


def main(profile: Profile = DEFAULT, info: Mapping[str, Any] | None = None) -> int:
    """Serve on this process's stdin and stdout; git runs with this process's environment."""
    server = Server(profile, info=info)
    answers = sys.stdout.buffer
    with contextlib.redirect_stdout(sys.stderr):
        try:
            serve(server, sys.stdin.buffer, answers)
        except (BrokenPipeError, KeyboardInterrupt):
            return 0
    return 0
