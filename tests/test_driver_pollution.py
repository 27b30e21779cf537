"""reference/driver.mjs notices when upstream code changes a built-in a `system/**` walk can reach, and undoes it.

A stand-in compiler module (the driver's second form: a module with its own `export { ... };`)
walks the property names in the request's system prompt from a plain object, as upstream's
`renderSystemTree` walks a label, and creates an object at the end: the answer must say
"polluted" wherever that lands on a built-in, Number and Number.prototype included. The driver
then puts the built-ins back and keeps running ("restored"), so a later request in the same process
sees none of it; a change it cannot undo (a frozen built-in) still ends the process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from compiler_cases import AGENT, CONVERSATION, NOW, SMALL, SYSTEM, RepoSpec, build

from harness.acquire.manifest import DRIVER_PATH
from harness.core.model import CompileRequest
from harness.core.reference import ReferenceSpec
from harness.runners.bun_reference import BunReferenceRunner
from harness.tools.mutation import default_references

FAKE_COMPILER = """\
function __esm(fn) { return fn; }

// src/backend/local/system-prompt-compilation.ts
var init_fake = __esm(() => {});
function compileLocalSystemPrompt(options) {
  const names = options.agent.system ? options.agent.system.split("/") : [];
  const last = names.pop();
  let node = {};
  for (const name of names) {
    if (!node[name] || typeof node[name] === "string") node[name] = {};
    node = node[name];
  }
  if (last !== undefined) node[last] = {};
  return { content: options.agent.system, compiledAt: options.now.toISOString() };
}
export { compileLocalSystemPrompt, init_fake };
"""


def answers(bun: Path, module: Path, *walks: str) -> list[dict]:
    """The driver's answers to one compile request per walk, sent to one process; every answer must be ok."""
    lines = "".join(
        json.dumps(
            {
                "id": i,
                "op": "compile",
                "memoryDir": str(module.parent),
                "system": walk,
                "agentId": "a",
                "conversationId": "c",
                "now": "2026-01-02T03:04:05.678Z",
            }
        )
        + "\n"
        for i, walk in enumerate(walks, 1)
    )
    done = subprocess.run(
        [str(bun), "--no-install", str(DRIVER_PATH), str(module)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    for reply, walk in zip(replies, walks, strict=False):
        assert reply["ok"], reply
        assert reply["record"]["content"] == walk
    return replies


def answer(bun: Path, module: Path, walk: str) -> dict:
    (reply,) = answers(bun, module, walk)
    return reply


@pytest.mark.parametrize(
    "walk",
    [
        "constructor/length/__proto__/x",  # (1).__proto__: Number.prototype (cases/compile/builtins-number-proto)
        "constructor/length/constructor/x",  # (1).constructor: Number
        "constructor/length/__proto__/toFixed/x",  # a method of Number.prototype
        "constructor/length/constructor/parseFloat/x",  # Number.parseFloat, two levels below Number
        "constructor/length/constructor/prototype/constructor/isInteger/x",  # the same Number, another way
        "constructor/keys/x",  # Object.keys
        "toString/__proto__/call/x",  # Function.prototype.call
        "toString/constructor/x",  # Function
        "__proto__/x",  # Object.prototype itself
    ],
)
def test_a_write_on_a_reachable_built_in_is_reported_as_pollution(tmp_path: Path, reference_bun: Path, walk) -> None:
    module = tmp_path / "compiler.mjs"
    module.write_text(FAKE_COMPILER)
    assert answer(reference_bun, module, walk)["polluted"] is True


REACHABLE_WALKS = [
    "constructor/length/__proto__/x",
    "constructor/keys/x",
    "toString/__proto__/call/x",
    "toString/constructor/x",
    "__proto__/x",
]

# Reads what a walk leaves behind: which of the names written above are visible on the built-ins.
PROBE_COMPILER = FAKE_COMPILER.replace(
    "  return { content: options.agent.system,",
    "  const left = [(1).__proto__.x, Object.keys.x, Function.prototype.call.x, Function.x, ({}).x]\n"
    "    .map((v) => v !== undefined);\n"
    "  return { left, content: options.agent.system,",
)


@pytest.mark.parametrize("walk", REACHABLE_WALKS)
def test_a_polluted_built_in_is_restored_and_the_process_answers_on(tmp_path: Path, reference_bun: Path, walk) -> None:
    module = tmp_path / "compiler.mjs"
    module.write_text(PROBE_COMPILER)
    first, second = answers(reference_bun, module, walk, "y")
    assert (first["polluted"], first.get("restored")) == (True, True)
    assert any(first["record"]["left"])  # the walk did land on a built-in, and the same compile sees it
    assert (second["polluted"], second["record"]["left"]) == (False, [False] * 5)  # the next one sees none


def test_a_change_the_driver_cannot_undo_ends_the_process(tmp_path: Path, reference_bun: Path) -> None:
    module = tmp_path / "compiler.mjs"  # freezing a watched built-in cannot be taken back
    module.write_text(
        FAKE_COMPILER.replace(
            "  let node = {};", "  if (names[0] === 'freeze') Object.freeze(Object.keys);\n  let node = {};"
        )
    )
    replies = answers(reference_bun, module, "freeze/x", "y")
    assert len(replies) == 1  # the driver exited after its answer: the second request went unanswered
    assert replies[0]["polluted"] is True and "restored" not in replies[0]


@pytest.mark.parametrize("walk", ["", "x", "a/b"])  # a fresh object, and objects made along the way
def test_a_walk_that_stays_in_plain_objects_is_clean(tmp_path: Path, reference_bun: Path, walk: str) -> None:
    module = tmp_path / "compiler.mjs"
    module.write_text(FAKE_COMPILER)
    assert answer(reference_bun, module, walk)["polluted"] is False


@pytest.mark.integration
@pytest.mark.parametrize("reference", default_references())
def test_no_release_touches_a_watched_built_in_on_a_plain_compile(tmp_path: Path, git_env, release_bundle, reference):
    """No false alarm: the snapshot is stable across a real release's import, init and compiles."""
    release_bundle(reference)
    memory = build(RepoSpec(files=SMALL), tmp_path / "m", git_env)
    runner = BunReferenceRunner(ReferenceSpec.parse(reference), tmp_path / "home", ceiling=tmp_path, timeout=120)
    try:
        runner.start()
        assert runner.start_error is None, runner.start_error
        for _ in range(2):
            outcome = runner.compile(CompileRequest(memory, SYSTEM, AGENT, CONVERSATION, NOW))
            assert outcome.status == "ok" and not outcome.polluted, outcome
        assert runner.process.starts == 1
    finally:
        runner.close()
