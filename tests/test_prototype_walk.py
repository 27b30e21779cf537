"""`render_system_tree` against upstream's own `renderSystemTree`, run by bun in a fresh realm per input.

The function's source is read from the cached 0.32.18 bundle at test time (never committed) and run as
strict code in a new `node:vm` context (fresh built-ins, so one input's pollution cannot reach the
next). Labels are generated from every name a walk can reach (the built-ins snapshot's property names,
`__proto__`, the leaf keys) and ordinary names. Also checks that `memfs_prompt/js_builtins.json` is what
bun 1.4.5 reports today.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from memfs_prompt.errors import UpstreamError
from memfs_prompt.jsobjects import _snapshot
from memfs_prompt.render_v1 import MemoryFile, render_system_tree

CACHE = Path.home() / ".cache" / "letta-conformance"
BUN = CACHE / "bun" / "1.4.5" / "package" / "bin" / "bun"
BUNDLE = CACHE / "letta-code" / "0.32.18" / "package" / "letta.js"
ROOT = Path(__file__).resolve().parent.parent

RUN_UPSTREAM = r"""
import vm from "node:vm";
import { readFileSync } from "node:fs";
const bundle = readFileSync(process.argv[2], "utf8");
const start = bundle.indexOf("function renderSystemTree(files) {");
const end = bundle.indexOf("function renderMemfsProjection(", start);
if (start < 0 || end < 0) throw new Error("renderSystemTree not found");
const source = bundle.slice(start, end);
const sets = JSON.parse(readFileSync(0, "utf8"));
const out = sets.map((files) => {
  const context = vm.createContext({ files });
  return vm.runInContext(`"use strict";\n${source}\n;(() => { try { return renderSystemTree(files); }
    catch (e) { return { thrown: e.name + ": " + e.message }; } })()`, context);
});
process.stdout.write(JSON.stringify(out));
"""

needs_bun = pytest.mark.skipif(
    not (BUN.exists() and BUNDLE.exists()), reason="bun 1.4.5 or the 0.32.18 bundle is not cached"
)


def upstream(sets: list[list[dict[str, str]]], tmp_path: Path) -> list[object]:
    script = tmp_path / "run.mjs"
    script.write_text(RUN_UPSTREAM)
    done = subprocess.run(
        [str(BUN), str(script), str(BUNDLE)],
        input=json.dumps(sets).encode(),
        capture_output=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


def port(files: list[dict[str, str]]) -> object:
    try:
        return render_system_tree(
            [MemoryFile(f"{f['label']}.md", f["label"], f["value"], f["description"]) for f in files]
        )
    except UpstreamError:
        return "thrown"


def reachable_names() -> list[str]:
    names = {key for entry in _snapshot()["objects"] for key in entry["props"]}
    return sorted(names | {"__proto__", "__value__", "__description__", "x", "y", "0", "10", "a"})


def generated_sets(seed: int, count: int) -> list[list[dict[str, str]]]:
    rng = random.Random(seed)
    names = reachable_names()
    sets = []
    for _ in range(count):
        files = []
        for index in range(rng.randint(1, 4)):
            parts = [rng.choice(names) for _ in range(rng.randint(1, 4))]
            description = rng.choice(["", "d", " spaced "])
            files.append({"label": "system/" + "/".join(parts), "value": f"v{index}\n", "description": description})
        sets.append(files)
    return sets


@needs_bun
def test_the_port_walks_system_labels_as_upstream_does(tmp_path: Path) -> None:
    sets = generated_sets(41, 5000)
    answers = upstream(sets, tmp_path)
    mismatches = []
    for files, answer in zip(sets, answers, strict=True):
        expected = "thrown" if isinstance(answer, dict) else answer
        if port(files) != expected:
            mismatches.append((files, answer, port(files)))
    assert not mismatches, mismatches[:5]


@needs_bun
def test_each_input_gets_fresh_built_ins(tmp_path: Path) -> None:
    polluting = [{"label": "system/constructor/prototype/x/y", "value": "p", "description": ""}]
    victim = [{"label": "system/x", "value": "X", "description": ""}]
    answers = upstream([polluting, victim], tmp_path)
    assert answers[1] == port(victim) and "<x>" in answers[1]


@needs_bun
def test_the_built_ins_snapshot_is_bun_s(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BUN), str(ROOT / "tests" / "js_builtins_snapshot.mjs")], capture_output=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == _snapshot()


@pytest.mark.parametrize(
    ("labels", "throws"),
    [
        (["system/constructor/name"], True),
        (["system/constructor/length"], True),
        (["system/valueOf/length/x"], True),
        (["system/constructor/arguments/x"], True),
        (["system/toString/prototype/x"], False),
        (["system/constructor/length/toFixed/x"], False),
        (["system/constructor/length/constructor/NaN/x"], True),
    ],
)
def test_named_walks(labels: list[str], throws: bool) -> None:
    result = port([{"label": label, "value": "v", "description": ""} for label in labels])
    assert (result == "thrown") is throws
