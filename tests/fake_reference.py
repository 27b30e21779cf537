"""A fake `bun` for fault injection: a small Python script on PATH that speaks reference/driver.mjs's protocol.

`conformance run --reference bundle:PATH` then goes through the real code path (ensure_bun finds it on
PATH, BunReferenceRunner starts it with the isolated environment) while the test decides how it
misbehaves. It reads each line as JSON.parse does (NaN and Infinity are a bad line, answered with
`"id": null` as the driver answers one). Honest answers come from the Python port itself, so a case the
fake does not sabotage passes; a case whose `inputs.system` contains `FAULT:<mode>` gets that fault:

    crash        exit 3 before answering           hang        sleep (a grandchild `sleep` too)
    garbage      a line that is not JSON            partial     half an answer line, then exit
    stale-id     an answer with the previous id    future-id   an answer with the next id
    twice        the right answer, then a second copy of it (out of order for the next request)
    polluted     the right answer marked polluted, then exit (as the driver does)
    polluted-wrong  a wrong record marked polluted, then exit
    wrong        a record whose coreMemory differs from the port's
    not-ok       {"ok": false, "error": ...}        no-record   {"ok": true} without a record
    huge         an answer line of LINE_LIMIT_FOR_TESTS bytes of garbage without a newline

`--version` prints the version written in `fake-bun.json` beside the script (default: the pinned one); its
`mode` (install_fake_bun(..., mode="wrong")) is the fault of every request that names none. Requests of
other ops than compile (memory_view, ...) get the port's honest answer (`memfs_prompt.protocol.Server`).
Every process writes its pid to `pids/<pid>` beside the script, and `hang` writes `hanging`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from harness.acquire.manifest import REPO_ROOT
from harness.core.registries import load_manifest

SCRIPT = r"""#!{python}
import json, os, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = json.loads((HERE / "fake-bun.json").read_text())
if sys.argv[1:] == ["--version"]:
    print(CONFIG["version"])
    sys.exit(0)
sys.path.insert(0, {repo_root!r})
(HERE / "pids").mkdir(exist_ok=True)
(HERE / "pids" / str(os.getpid())).write_text("")
from memfs_prompt import compile_system_prompt, profile_for_release
from memfs_prompt.cli import parse_now
from memfs_prompt.protocol import Server

args = [a for a in sys.argv[1:] if a != "--no-install"]  # the runner never lets bun fetch packages
bundle = Path(args[1])
if not bundle.read_bytes().startswith(b"// fake letta-code bundle"):
    sys.stderr.write(f"cannot load bundle {{bundle}}: not a bundle\n")
    sys.exit(3)
version = json.loads((bundle.parent / "package.json").read_text())["version"]
profile = profile_for_release(version)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def record_for(req):
    return compile_system_prompt(
        req["memoryDir"], system=req["system"], agent_id=req["agentId"], conversation_id=req["conversationId"],
        now=parse_now(req["now"]), previous_message_count=req["previousMessageCount"],
        include_memfs=req["includeMemfs"], profile=profile,
    ).to_json()


def js_parse(line):  # JSON.parse, as the driver reads a line: NaN, Infinity and -Infinity are no JSON
    def refuse(name):
        raise ValueError(f"JSON Parse error: Unexpected identifier \"{{name}}\"")
    return json.loads(line, parse_constant=refuse)


for line in sys.stdin:
    try:
        req = js_parse(line)
    except ValueError as error:  # answered as reference/driver.mjs answers a bad line
        send({{"id": None, "ok": False, "error": f"request is not JSON: {{error}}"}})
        continue
    rid = req["id"]
    if req["op"] == "hello":
        send({{"id": rid, "ok": True, "info": {{"bun": "fake", "version": version}}}})
        continue
    if req["op"] != "compile":  # the other ops (memory_view, ...): the port's honest answer, no fault
        send(Server(profile).handle(req))
        continue
    mode = req["system"].partition("FAULT:")[2].split()[0] if "FAULT:" in req["system"] else CONFIG.get("mode", "")
    if mode == "crash":
        sys.stderr.write("fake bun: crashing on purpose\n")
        sys.exit(3)
    if mode == "hang":
        sys.stderr.write("fake bun: hanging on purpose\n")
        child = subprocess.Popen(["sleep", "600"])
        (HERE / "hanging").write_text(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(600)
    if mode == "garbage":
        sys.stdout.write("Segmentation fault (core dumped) -- not JSON\n")
        sys.stdout.flush()
        continue
    if mode == "partial":
        sys.stdout.write('{{"id": %d, "ok": true, "record": {{"content": "' % rid)
        sys.stdout.flush()
        os._exit(0)
    if mode == "huge":
        chunk = "x" * (1 << 16)
        for _ in range(CONFIG.get("huge_chunks", 64)):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(600)
    try:
        record = record_for(req)
    except Exception as error:
        send({{"id": rid, "ok": True, "thrown": f"{{type(error).__name__}}: {{error}}", "polluted": False}})
        continue
    if mode == "stale-id":
        send({{"id": rid - 1, "ok": True, "record": record, "polluted": False}})
    elif mode == "future-id":
        send({{"id": rid + 1, "ok": True, "record": record, "polluted": False}})
    elif mode == "twice":
        send({{"id": rid, "ok": True, "record": record, "polluted": False}})
        send({{"id": rid, "ok": True, "record": record, "polluted": False}})
    elif mode in ("polluted", "polluted-wrong"):
        if mode == "polluted-wrong":
            record["coreMemory"] = record.get("coreMemory", "") + "!"
        send({{"id": rid, "ok": True, "record": record, "polluted": True}})
        sys.exit(0)
    elif mode == "wrong":
        record["coreMemory"] = record.get("coreMemory", "") + "!"
        send({{"id": rid, "ok": True, "record": record, "polluted": False}})
    elif mode == "not-ok":
        send({{"id": rid, "ok": False, "error": "fake bun refuses this request"}})
    elif mode == "no-record":
        send({{"id": rid, "ok": True, "polluted": False}})
    else:
        send({{"id": rid, "ok": True, "record": record, "polluted": False}})
"""


def install_fake_bun(bin_dir: Path, version: str | None = None, **config: object) -> Path:
    """Write `bun` into bin_dir (put bin_dir first on PATH); returns its path."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    bun = bin_dir / "bun"
    bun.write_text(SCRIPT.format(python=sys.executable, repo_root=str(REPO_ROOT)), encoding="utf-8")
    bun.chmod(0o755)
    pinned = load_manifest()["bun"]["version"]
    (bin_dir / "fake-bun.json").write_text(json.dumps({"version": version or pinned, **config}))
    return bun


def fake_bundle(directory: Path, version: str = "0.32.18") -> Path:
    """A `letta.js` the fake bun accepts, with the package.json that names its release."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "package.json").write_text(json.dumps({"name": "@letta-ai/letta-code", "version": version}))
    bundle = directory / "letta.js"
    bundle.write_text("// fake letta-code bundle\n")
    return bundle


def pids_started(bin_dir: Path) -> list[int]:
    directory = bin_dir / "pids"
    return sorted(int(p.name) for p in directory.iterdir()) if directory.exists() else []


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def scenario_yaml(case_id: str, system: str = "S\n\n{CORE_MEMORY}", body: str = "hello") -> str:
    """A small valid scenario whose reference behaviour is chosen by `system` (FAULT:<mode>)."""
    return (
        f"id: {case_id}\ndescription: fault injection\ninputs:\n  system: {json.dumps(system)}\n"
        f"repo:\n  commits:\n    - files:\n        system/a.md: {json.dumps(body + chr(10))}\n"
    )


def write_cases(directory: Path, cases: dict[str, str]) -> Path:
    """cases: id -> fault mode ("" for an honest answer). Files land in directory/compile/<id>.yaml."""
    compile_dir = directory / "compile"
    compile_dir.mkdir(parents=True, exist_ok=True)
    for case_id, mode in cases.items():
        system = f"S FAULT:{mode} \n\n{{CORE_MEMORY}}" if mode else "S\n\n{CORE_MEMORY}"
        (compile_dir / f"{case_id}.yaml").write_text(scenario_yaml(case_id, system, body=case_id))
    return directory


def env_with_path_first(bin_dir: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
