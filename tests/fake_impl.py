"""A fake implementation under test for fault injection: `python tests/fake_impl.py [OPTIONS]`.

It speaks docs/protocol.md on stdin/stdout with honest answers from the port's own protocol server
(`memfs_prompt.protocol.Server`, as `python -m memfs_prompt serve` answers), so a request it does not
sabotage gets the port's answer; `--impl "cmd:python tests/fake_impl.py --fault crash"` makes every
case meet the fault. Which requests misbehave:

    --fault MODE         every request but hello
    FAULT:MODE           written anywhere in a request (a case's `inputs.system`, a turn's text): that request
    --hello-fault MODE   hello itself (a fault at start-up)
    --exit-after N       N requests (hello included) are answered, then the process exits 0 (ends mid-run)

    crash        exit 3 before answering (a line on stderr)    exit        exit 0 before answering
    hang         sleep (a grandchild `sleep` too)              garbage     a line that is not JSON
    partial      half an answer line, then exit                wrong-id    the answer with id + 1000
    stale-id     the answer with the previous id               twice       the answer, then a copy of it
    not-ok       {"ok": false, "error": ...}                   unsupported {"ok": false, "unsupported": ...}
    wrong        a compile record whose content has "!" appended (other ops: the honest answer)

Capabilities, for not-applicable verdicts: `--ops hello,compile` serves only those ops (any other is
answered `unsupported`; hello's `capabilities.ops` lists them and `lifecycle` is false unless all three
lifecycle ops are served); `--profiles NAME,...` claims only those profiles (a request naming another is
answered `unsupported`; one naming none gets the first); `--features ID,...` declares only those features
in hello (`capabilities.features`; `--features ''` declares none; absent: the port's, every one);
`--features-json JSON` puts that JSON value there instead (`--features-json absent` leaves the key out).
`--require-env NAME` exits 3 at start when NAME is not in its environment (as a program needing a
token or a path would). `--state DIR` writes DIR/pids/<pid> at start and DIR/hanging ("<pid> <sleep pid>")
when it hangs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt.profiles import DEFAULT, resolve_profile
from memfs_prompt.protocol import OPS, Server
from memfs_prompt.quirks import js_trim
from memfs_prompt.serve import encode_answer

MODES = (
    "crash",
    "exit",
    "hang",
    "garbage",
    "partial",
    "wrong-id",
    "stale-id",
    "twice",
    "not-ok",
    "unsupported",
    "wrong",
)
FAULT = re.compile(r"FAULT:([a-z-]+)")
LIFECYCLE_OPS = ("lifecycle_open", "lifecycle_step", "lifecycle_close")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python tests/fake_impl.py", description=__doc__.split("\n")[0])
    parser.add_argument("--fault", choices=MODES)
    parser.add_argument("--hello-fault", choices=MODES)
    parser.add_argument("--exit-after", type=int)
    parser.add_argument("--ops", help="comma-separated ops to serve (default: all)")
    parser.add_argument("--profiles", help="comma-separated profile names to claim (default: all)")
    parser.add_argument("--features", help="comma-separated feature ids to declare in hello (default: the port's)")
    parser.add_argument("--features-json", help="the JSON value of hello's capabilities.features, or `absent`")
    parser.add_argument("--require-env", metavar="NAME", help="exit 3 at start unless NAME is set")
    parser.add_argument("--state", type=Path)
    return parser.parse_args(argv)


class FakeImpl:
    def __init__(self, args: argparse.Namespace, stdout: BinaryIO) -> None:
        self.args, self.stdout = args, stdout
        self.ops = tuple(args.ops.split(",")) if args.ops else OPS
        self.profiles = tuple(args.profiles.split(",")) if args.profiles else None
        profile = resolve_profile(self.profiles[0]) if self.profiles else DEFAULT
        self.server = Server(profile, info={"implementation": "fake (tests/fake_impl.py)", "fault": args.fault})
        self.answered = 0

    def honest(self, request: Any) -> dict[str, Any]:
        if isinstance(request, dict) and isinstance(request.get("op"), str):
            op, rid = request["op"], request.get("id")
            if op not in self.ops:
                return {"id": rid, "ok": False, "unsupported": f"op {json.dumps(op)}"}
            profile = request.get("profile")
            if self.profiles is not None and profile is not None and profile not in self.profiles:
                return {"id": rid, "ok": False, "unsupported": f"profile {json.dumps(profile)}"}
        answer = self.server.handle(request)
        if answer.get("ok") and "capabilities" in answer:  # hello: what this fake claims
            answer["capabilities"] = {
                "ops": list(self.ops),
                "lifecycle": all(op in self.ops for op in LIFECYCLE_OPS),
                "profiles": list(self.profiles) if self.profiles is not None else answer["capabilities"]["profiles"],
                "features": answer["capabilities"]["features"]
                if self.args.features is None
                else [name for name in self.args.features.split(",") if name],
            }
            if self.args.features_json == "absent":
                del answer["capabilities"]["features"]
            elif self.args.features_json is not None:
                answer["capabilities"]["features"] = json.loads(self.args.features_json)
        return answer

    def mode_of(self, text: str, request: Any) -> str | None:
        if isinstance(request, dict) and request.get("op") == "hello":
            return self.args.hello_fault
        found = FAULT.search(text)
        return found.group(1) if found else self.args.fault

    def answer(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        if not js_trim(text):
            return
        try:
            request: Any = json.loads(text)
        except ValueError as error:
            request, answer = None, {"id": None, "ok": False, "error": f"request is not JSON: {error}"}
        else:
            answer = None
        if self.args.exit_after is not None and self.answered >= self.args.exit_after:
            os._exit(0)
        mode = self.mode_of(text, request) if request is not None else None
        if answer is None:
            answer = self.sabotaged(mode, request)
        if answer is not None:
            self.stdout.write(encode_answer(answer) * (2 if mode == "twice" else 1))
            self.stdout.flush()
        self.answered += 1

    def sabotaged(self, mode: str | None, request: Any) -> dict[str, Any] | None:
        rid = request.get("id") if isinstance(request, dict) else None
        if mode == "crash":
            sys.stderr.write("fake impl: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if mode == "exit":
            os._exit(0)
        if mode == "hang":
            sys.stderr.write("fake impl: hanging on purpose\n")
            sys.stderr.flush()
            child = subprocess.Popen(["sleep", "600"])
            if self.args.state:
                (self.args.state / "hanging").write_text(f"{os.getpid()} {child.pid}")
            time.sleep(600)
        if mode == "garbage":
            self.stdout.write(b"Segmentation fault (core dumped) -- not JSON\n")
            self.stdout.flush()
            return None
        if mode == "partial":
            self.stdout.write(b'{"id": %d, "ok": true, "record": {"content": "' % (rid or 0))
            self.stdout.flush()
            os._exit(0)
        if mode == "not-ok":
            return {"id": rid, "ok": False, "error": "fake impl refuses this request"}
        if mode == "unsupported":
            return {"id": rid, "ok": False, "unsupported": "fault injection"}
        answer = self.honest(request)
        if mode == "wrong-id" and isinstance(rid, int):
            answer["id"] = rid + 1000
        elif mode == "stale-id" and isinstance(rid, int):
            answer["id"] = rid - 1
        elif mode == "wrong" and isinstance(answer.get("record"), dict):
            answer["record"]["content"] += "!"
        return answer


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.require_env and args.require_env not in os.environ:
        sys.stderr.write(f"fake impl: {args.require_env} is not set\n")
        return 3
    if args.state:
        (args.state / "pids").mkdir(parents=True, exist_ok=True)
        (args.state / "pids" / str(os.getpid())).write_text("")
    fake = FakeImpl(args, sys.stdout.buffer)
    for line in sys.stdin.buffer:  # lines end at b"\n" only
        if not line.endswith(b"\n"):
            break
        fake.answer(line[:-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
