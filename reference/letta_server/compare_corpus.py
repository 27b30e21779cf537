"""Compare the Letta server (this directory's driver) with letta-code on the compile corpus.

    python reference/letta_server/compare_corpus.py [CASES_DIR ...] [--profile letta-code@0.32.14]
        [--version 0.16.8] [--json OUT.jsonl] [-k SUBSTRING]

Builds each case's repository with the harness (harness.repo.build.materialize_repo, read-only use),
sends the case's compile request to the server driver (one process for the run) and to the Python
port under the letta-code profile (byte-identical to that letta-code release on the corpus), and
compares what is comparable between the two products (see docs/products.md):

- `memory`: the memory rendering. Server: `Memory.compile()` without the "\\n\\n" its sections
  start with. letta-code: `coreMemory` without its trailing "\\n\\n<memory_metadata>...".
- `memfsRevision`: the HEAD commit read (null when there is none).
- `thrown`: whether the compile raised.

`content` and `coreMemory` are not compared: they carry `<memory_metadata>`, which differs by
design. For information, a case whose system message is put together differently around the
placeholder (each side's `coreMemory` replaced by `{CORE_MEMORY}` in its `content`) is marked
"(assembly differs)".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.acquire.releases import cache_root  # noqa: E402
from harness.cases.load import load_scenarios  # noqa: E402
from harness.cases.tags import TAGS  # noqa: E402
from harness.repo.build import materialize_repo  # noqa: E402
from harness.repo.gitenv import isolated_env  # noqa: E402
from harness.run.session import build_request  # noqa: E402
from harness.runners.base import Outcome  # noqa: E402
from harness.runners.jsonl_process import JsonLinesRunner  # noqa: E402
from harness.runners.python_port import PythonPortRunner  # noqa: E402
from memfs_prompt.profiles import resolve_profile  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from install import DRIVER, ensure_server_env  # noqa: E402

METADATA_OPEN = "<memory_metadata>"

# cases-pending/product-difference/ carries this tag before harness/cases/tags.py has it (its README)
TAGS.setdefault("product-difference", "a known difference between the Letta server and letta-code")


def server_memory(record: dict[str, Any]) -> str:
    return record["memory"].removeprefix("\n\n")


def letta_code_memory(record: dict[str, Any]) -> str:
    core = record.get("coreMemory", "")
    at = core.rfind(METADATA_OPEN)
    return (core[:at] if at >= 0 else core).removesuffix("\n\n")


def first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b)) if len(a) != len(b) else -1


def compare(server: Outcome, code: Outcome) -> dict[str, Any]:
    """What differs between the two products' outcomes, on the comparable fields."""
    row: dict[str, Any] = {"server": server.status, "letta_code": code.status, "differs": []}
    if "error" in (server.status, code.status):
        row["differs"].append("error")
        row["error"] = server.error or code.error
        return row
    if server.status != code.status:
        row["differs"].append("thrown")
        row["thrown"] = server.thrown or code.thrown
        return row
    if server.status == "thrown":
        return row
    assert server.record is not None and code.record is not None
    ours, theirs = server_memory(server.record), letta_code_memory(code.record)
    if ours != theirs:
        at = first_difference(ours, theirs)
        row["differs"].append("memory")
        row["at"] = at
        row["server_near"] = ours[max(0, at - 40) : at + 40]
        row["letta_code_near"] = theirs[max(0, at - 40) : at + 40]
    if server.record.get("memfsRevision") != code.record.get("memfsRevision"):
        row["differs"].append("memfsRevision")
    ours, theirs = assembly(server.record), assembly(code.record)
    if ours != theirs:  # informational: how the system message is put together around {CORE_MEMORY}
        row["assembly"] = {"server": ours[-200:], "letta_code": theirs[-200:]}
    return row


def assembly(record: dict[str, Any]) -> str:
    """The system message with the text that replaced {CORE_MEMORY} shown as the placeholder."""
    return (
        record["content"].replace(record["coreMemory"], "{CORE_MEMORY}") if record["coreMemory"] else record["content"]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", type=Path, default=[ROOT / "cases" / "compile"])
    parser.add_argument("--profile", default="letta-code@0.32.14")
    parser.add_argument("--version", default="0.16.8")
    parser.add_argument("--json", type=Path, help="write one JSON line per case here")
    parser.add_argument("-k", default="", help="only cases whose id contains this")
    args = parser.parse_args(argv)

    loaded = load_scenarios(args.cases)
    for error in loaded.errors:  # a case that does not load is said, never skipped silently
        print(f"not loaded: {error}", file=sys.stderr)
    scenarios = [s for s in loaded.scenarios if s.kind == "compile" and args.k in s.id]
    cache = cache_root()
    home, ceiling = cache / "home", cache / "repos"
    env = isolated_env(home, ceiling)
    python = ensure_server_env(args.version, log=lambda m: print(m, file=sys.stderr))
    server = JsonLinesRunner(f"letta-server@{args.version}", [str(python), str(DRIVER)], env, timeout=120.0)
    server.start()
    if server.start_error:
        print(f"error: the server driver did not start: {server.start_error}", file=sys.stderr)
        return 2
    port = PythonPortRunner(resolve_profile(args.profile), env)
    rows = []
    try:
        for scenario in scenarios:
            repo = materialize_repo(scenario, cache)
            request = build_request(scenario, repo)
            row = {"case": scenario.id, "tags": list(scenario.tags)}
            row.update(compare(server.compile(request), port.compile(request)))
            rows.append(row)
            mark = ",".join(row["differs"]) or "same"
            mark += " (assembly differs)" if "assembly" in row else ""
            print(f"{scenario.id:50} {mark}", flush=True)
    finally:
        server.close()
    if args.json:
        args.json.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    differing = [row for row in rows if row["differs"]]
    print(f"{len(rows)} cases, {len(rows) - len(differing)} same, {len(differing)} differ", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
