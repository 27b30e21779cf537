"""Running upstream code itself: a function section cut out of a real letta-code bundle, run by the pinned bun.

Used to (re)measure the expected values that the unit tests hold as literals, so that a
transcription mistake in a literal is caught by an integration test, not believed.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any


def module_section(bundle_text: str, module_path: str) -> str:
    """The text of one bundled module (`// src/...` comment up to the next one), as reference/driver.mjs finds it."""
    marker = f"\n// {module_path}\n"
    start = bundle_text.index(marker)
    end = bundle_text.find("\n// src/", start + len(marker))
    return bundle_text[start + 1 : end if end >= 0 else len(bundle_text)]


def bun_env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}


def run_bun_script(bun: Path, script: str, payload: Any, timeout: float = 60.0) -> Any:
    """Run `script` (an ES module reading JSON on stdin, printing JSON) under bun; return the parsed answer."""
    with tempfile.TemporaryDirectory(prefix="oracle-") as tmp:
        path = Path(tmp) / "oracle.mjs"
        path.write_text(script, encoding="utf-8")
        done = subprocess.run(
            [str(bun), str(path)],
            input=json.dumps(payload, ensure_ascii=True).encode("ascii"),
            capture_output=True,
            env=bun_env(Path(tmp)),
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"bun failed ({done.returncode}): {done.stderr.decode('utf-8', 'replace')}")
    return json.loads(done.stdout)


FRONTMATTER_MODULE = "src/utils/frontmatter.ts"


def frontmatter_script(section: str) -> str:
    """An ES module holding upstream's frontmatter section verbatim, applying parseFrontmatter to each input."""
    if "function parseFrontmatter(" not in section:
        raise ValueError("the section has no `function parseFrontmatter(`")
    return (
        "var __export = () => {};\n"
        + section
        + "\nconst inputs = JSON.parse(await Bun.stdin.text());\n"
        + "const out = inputs.map((s) => { const r = parseFrontmatter(s);"
        + " return { frontmatter: r.frontmatter, body: r.body }; });\n"
        + "process.stdout.write(JSON.stringify(out));\n"
    )


def measure_frontmatter(bun: Path, section: str, inputs: list[str]) -> list[dict[str, Any]]:
    return run_bun_script(bun, frontmatter_script(section), inputs)


if __name__ == "__main__":  # print measurements for the literals in test_frontmatter.py
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_frontmatter import INPUTS  # type: ignore[import-not-found]

    bun = Path(os.environ.get("BUN", "/tmp/lcache/bun/1.4.5/package/bin/bun"))
    results = {}
    for version in sys.argv[1:]:
        section = Path(f"/tmp/lc/{version}-frontmatter.ts").read_text(encoding="utf-8")
        results[version] = measure_frontmatter(bun, section, list(INPUTS.values()))
    print(json.dumps({v: dict(zip(INPUTS, r, strict=True)) for v, r in results.items()}, ensure_ascii=False, indent=1))


def reference_compile(bun: Path, bundle: Path, requests: list[dict[str, Any]], env: dict[str, str]) -> list[Any]:
    """Answers of upstream compileLocalSystemPrompt (via reference/driver.mjs) to `compile` requests, in order."""
    from harness.acquire.manifest import DRIVER_PATH

    lines = [json.dumps({"id": i + 1, "op": "compile", **r}, ensure_ascii=True) for i, r in enumerate(requests)]
    with tempfile.TemporaryDirectory(prefix="oracle-cwd-") as cwd:  # 0.25.x write .letta/ into their cwd
        done = subprocess.run(
            [str(bun), "--no-install", str(DRIVER_PATH), str(bundle)],
            input=("\n".join(lines) + "\n").encode("ascii"),
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=300,
            check=False,
        )
    answers = [json.loads(line) for line in done.stdout.split(b"\n") if line]
    if len(answers) != len(requests):
        raise RuntimeError(f"driver answered {len(answers)} of {len(requests)}: {done.stderr.decode()[-2000:]}")
    return answers
