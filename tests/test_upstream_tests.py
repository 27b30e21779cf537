"""`conformance upstream-tests` (harness.tools.upstream_*) on a small letta-code look-alike these tests create: its
own tiny compiler module and bun test files importing it, and tests/upstream_fixture_impl.py as the
implementation under test (with planted bugs on demand), so CI needs no upstream history. The selection rule,
junit and call-log reading and the verdict rule are tested as functions too; with LETTA_CODE_GIT=PATH (a
local clone of letta-ai/letta-code) an integration test runs v0.30.28 against the Python port and a planted bug."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import OFFLINE, git_env_for
from test_revision_build import Upstream, snapshot

from harness.acquire.releases import ensure_bun
from harness.cli.main import main
from harness.report.upstream_records import FILE_LEVEL, FileRun, Outcome, Verdict
from harness.report.upstream_tests import UpstreamReport, report_json, target_rows, terminal_lines
from harness.report.writers import UPSTREAM_TESTS, write_reports
from harness.runners.git_reference import GitReference
from harness.runners.implementations import ImplSpec
from harness.tools.upstream import hook_client
from harness.tools.upstream import suite as upstream_tests
from harness.tools.upstream.bun_file import attribute_calls, read_junit
from harness.tools.upstream.select import (
    FORWARDED,
    HOOK_COMMAND,
    TARGETS,
    bunfig_preloads,
    hook_shim,
    memory_tool_shim,
    path_aliases,
    placed_text,
    resolve,
    select_tests,
    selection_reasons,
    shim_module,
)
from harness.tools.upstream.verdict import NO_CALL_NOTE, mojibake_of, producing_call

needs_bun = pytest.mark.skipif(OFFLINE, reason="needs the pinned bun (LETTA_CONFORMANCE_OFFLINE=1)")
IMPL = Path(__file__).with_name("upstream_fixture_impl.py")
TEST_FILE = "src/backend/local-system-prompt-compilation.test.ts"

COMPILER = """import { createHash } from "node:crypto";
import { getScopedMemoryFilesystemRoot } from "@/agent/memory-filesystem";

export function hashRawSystemPrompt(systemPrompt: string): string {
  return createHash("sha256").update(systemPrompt).digest("hex");
}

export function compileLocalSystemPrompt(options: any) {
  const compiledAt = options.now ?? new Date();
  const memoryDir = options.memoryDir ?? getScopedMemoryFilesystemRoot(options.agent.id);
  const core = `MEMORY ${options.agent.id} ${options.conversationId} ${memoryDir}`;
  return {
    content: options.agent.system.replace("{CORE_MEMORY}", core),
    compiledAt: compiledAt.toISOString(),
    rawSystemHash: hashRawSystemPrompt(options.agent.system),
    memfsRevision: undefined,
  };
}

export function compileAvailableSkillsBlock(clientSkills: any[] = []): string {
  const names = clientSkills.map((skill) => skill.name);
  return names.length ? `<available_skills>\\n${names.join("\\n")}\\n</available_skills>` : "";
}

export function appendAvailableSkillsBlock(systemPrompt: string, clientSkills: any[] = []): string {
  const block = compileAvailableSkillsBlock(clientSkills);
  return block ? `${systemPrompt}\\n\\n${block}` : systemPrompt;
}

export function keptUpstream(): string {
  return "kept";
}
"""

TESTS = """import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import {
  appendAvailableSkillsBlock,
  compileAvailableSkillsBlock,
  compileLocalSystemPrompt,
  hashRawSystemPrompt,
  keptUpstream,
} from "@/backend/local/system-prompt-compilation";

const agent = { id: "agent-1", system: "base {CORE_MEMORY}" };

describe("tiny compiler", () => {
  test("injects core memory", () => {
    const compiled = compileLocalSystemPrompt({
      agent, conversationId: "conv-1", memoryDir: "/m", now: new Date("2026-01-02T00:00:00.000Z"),
    });
    expect(compiled.content).toBe("base MEMORY agent-1 conv-1 /m");
    expect(compiled.compiledAt).toBe("2026-01-02T00:00:00.000Z");
    expect("memfsRevision" in compiled).toBe(true);
    expect(compiled.memfsRevision).toBeUndefined();
  });
  test("hashes the raw prompt", () => {
    expect(hashRawSystemPrompt("x")).toBe("2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
  });
  test("asks upstream's default memory directory", () => {
    expect(compileLocalSystemPrompt({ agent, conversationId: "c" }).content).toContain("/nowhere/agent-1");
  });
  test("renders the skills block", () => {
    expect(compileAvailableSkillsBlock([{ name: "pdf" }])).toBe("<available_skills>\\npdf\\n</available_skills>");
    expect(appendAvailableSkillsBlock("p", [])).toBe("p");
  });
  test("throws on an invalid date", () => {
    expect(() => compileLocalSystemPrompt({ agent, conversationId: "c", memoryDir: "/m", now: new Date("x") }))
      .toThrow(RangeError);
  });
  test("keeps what is not forwarded", () => {
    mkdirSync(".letta", { recursive: true });
    writeFileSync(".letta/left-behind.json", "{}"); // upstream's tests run from the tree's root and write there
    expect(keptUpstream()).toBe("kept");
    expect(process.env.FIXTURE_PRELOADED).toBe("1");
  });
  test("is broken upstream", () => {
    expect(1 + 1).toBe(3);
  });
  test.skip("is skipped upstream", () => {});
});
"""

MEMORY_ROOT = "export function getScopedMemoryFilesystemRoot(id: string) { return `/nowhere/${id}`; }\n"
FRONTMATTER = "export function parseFrontmatter(text: string) { return { frontmatter: {}, body: text.trim() }; }\n"
FRONTMATTER_TEST = """import { expect, test } from "bun:test";
import { parseFrontmatter } from "../../utils/frontmatter";

test("parses a body", () => {
  expect(parseFrontmatter(" body ").body).toBe("body");
});
"""
MISSING_PACKAGE_TEST = """import { test } from "bun:test";
import { compileLocalSystemPrompt } from "@/backend/local/system-prompt-compilation";
import missing from "definitely-not-installed-package";

test("never loads", () => { compileLocalSystemPrompt(missing); });
"""


def fixture_files() -> dict[str, str | None]:
    return {
        "package.json": json.dumps({"name": "@letta-ai/letta-code", "version": "0.30.28"}),
        "tsconfig.json": '{\n  // a comment\n  "compilerOptions": {"paths": {"@/*": ["./src/*"]}}\n}\n',
        "bun.lock": '{\n  "lockfileVersion": 1,\n  "workspaces": {"": {"name": "fixture"}},\n  "packages": {},\n}\n',
        "bunfig.toml": '[test]\npreload = ["./scripts/test-preload.ts"]\n',
        "scripts/test-preload.ts": 'process.env.FIXTURE_PRELOADED = "1";\n',
        "src/agent/memory-filesystem.ts": MEMORY_ROOT,
        "src/backend/local/system-prompt-compilation.ts": COMPILER,
        TEST_FILE: TESTS,
        "src/utils/frontmatter.ts": FRONTMATTER,
        "src/tests/utils/frontmatter.test.ts": FRONTMATTER_TEST,
        "src/backend/missing-package.test.ts": MISSING_PACKAGE_TEST,
        "src/unrelated.test.ts": 'import { test } from "bun:test";\ntest("nothing of ours", () => {});\n',
    }


HOOK_MODULE = """export const PRE_COMMIT_HOOK_SCRIPT = `#!/bin/sh
for f in $(git diff --cached --name-only); do
  if git show ":$f" | grep -q BAD; then echo "  $f: refused (BAD)" >&2; exit 1; fi
done
exit 0
`;

export function installPreCommitHook(dir: string): void {
  void dir;
}
"""
HOOK_TEST_FILE = "src/agent/memory-git.precommit.test.ts"
HOOK_TESTS = """import { afterEach, beforeEach, expect, test } from "bun:test";
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRE_COMMIT_HOOK_SCRIPT } from "@/agent/memory-git-hooks";

let dir = "";
const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t" };
const git = (args: string) => execSync(`git ${args}`, { cwd: dir, encoding: "utf-8", env });

function commit(name: string, content: string): { ok: boolean; out: string } {
  writeFileSync(join(dir, name), content);
  git(`add ${name}`);
  try {
    git("commit -q -m x");
    return { ok: true, out: "" };
  } catch (error) {
    return { ok: false, out: String((error as { stderr?: string }).stderr) };
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hook-"));
  git("init -q");
  writeFileSync(join(dir, ".git", "hooks", "pre-commit"), PRE_COMMIT_HOOK_SCRIPT, { mode: 0o755 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("accepts good content", () => {
  expect(commit("a.md", "good\\n").ok).toBe(true);
});
test("refuses BAD content", () => {
  const result = commit("a.md", "BAD\\n");
  expect(result.ok).toBe(false);
  expect(result.out).toContain("a.md: refused (BAD)");
});
test("commits without the hook", () => {
  rmSync(join(dir, ".git", "hooks", "pre-commit"));
  expect(commit("a.md", "BAD\\n").ok).toBe(true);
});
"""


MEMORY_TOOL = """import { getCurrentAgentId } from "@/agent/context";
import { resolveScopedMemoryDir } from "@/agent/memory-filesystem";

export async function memory(args: any): Promise<{ message: string }> {
  if (!args.reason) throw new Error("memory: missing required parameter reason");
  const { getBackend } = await import("@/backend");
  const synced = getBackend().capabilities.localMemfs ? "committed locally" : "applied and pushed";
  return { message: `Memory ${args.command} ${synced} (${resolveScopedMemoryDir() ?? getCurrentAgentId()})` };
}

export function keptTool(): string {
  return "kept";
}
"""
MEMORY_TOOL_TEST_FILE = "src/tools/memory-tool.test.ts"
MEMORY_TOOL_TESTS = """import { expect, test } from "bun:test";

const { memory } = await import("@/tools/impl/memory");
process.env.MEMORY_DIR = "/m";
process.env.AGENT_ID = "agent-1";

test("writes with a local backend", async () => {
  process.env.FIXTURE_LOCAL = "1";
  const result = await memory({ command: "create", reason: "r", file_path: "system/a.md" });
  expect(result.message).toBe("Memory create committed locally (/m)");
});
test("writes with a remote backend", async () => {
  delete process.env.FIXTURE_LOCAL;
  expect((await memory({ command: "create", reason: "r" })).message).toContain("pushed");
});
test("requires a reason", async () => {
  await expect(memory({ command: "create" })).rejects.toThrow(/missing required parameter/);
});
"""


def memory_tool_fixture_files() -> dict[str, str | None]:
    """A look-alike with only the memory tool, the functions it asks and its test."""
    files = {k: v for k, v in fixture_files().items() if k in ("package.json", "tsconfig.json", "bun.lock")}
    return {
        **files,
        "src/agent/context.ts": 'export function getCurrentAgentId(): string {\n  throw new Error("no context");\n}\n',
        "src/agent/memory-filesystem.ts": (
            "export function resolveScopedMemoryDir(): string | null {\n  return process.env.MEMORY_DIR || null;\n}\n"
        ),
        "src/backend/index.ts": (
            "export function getBackend() {\n"
            '  return { capabilities: { localMemfs: process.env.FIXTURE_LOCAL === "1" },\n'
            '    retrieveAgent: async (id: string) => ({ id, name: "Bob" }) };\n}\n'
        ),
        "src/tools/impl/memory.ts": MEMORY_TOOL,
        MEMORY_TOOL_TEST_FILE: MEMORY_TOOL_TESTS,
    }


def hook_fixture_files() -> dict[str, str | None]:
    """A look-alike with only the pre-commit hook's module and its test (no compiler)."""
    files = {k: v for k, v in fixture_files().items() if k in ("package.json", "tsconfig.json", "bun.lock")}
    return {**files, "src/agent/memory-git-hooks.ts": HOOK_MODULE, HOOK_TEST_FILE: HOOK_TESTS}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(root))
    return root


@pytest.fixture
def fixture_repo(tmp_path: Path) -> Upstream:
    upstream = Upstream(tmp_path / "letta-code", git_env_for(tmp_path / "home", tmp_path))
    upstream.commit("a tiny compiler and its tests", fixture_files())
    return upstream


def run_fixture(repo: Upstream, bug: str | None = None) -> upstream_tests.RevisionResult:
    command = f"{sys.executable} {IMPL}" + (f" --bug {bug}" if bug else "")
    return upstream_tests.run_revision(
        GitReference(repo.path), ImplSpec.parse(f"cmd:{command}"), upstream_tests.Options(), ensure_bun()
    )


def verdicts(result: upstream_tests.RevisionResult) -> dict[str, tuple[Verdict, str]]:
    return {f"{t.file} > {t.name}": (t.verdict, t.reason) for t in result.tests}


# --- the rules, as functions ----------------------------------------------------------------------


def test_imports_resolve_as_upstream_resolves_them() -> None:
    paths = {"src/backend/local/system-prompt-compilation.ts", "src/utils/frontmatter.ts", "src/backend/local/index.ts"}
    aliases = path_aliases(b'{ // a comment\n "paths": {"@/*": ["./src/*"]} }')
    assert aliases == [("@/", "src/")]
    compiler = "src/backend/local/system-prompt-compilation.ts"
    assert resolve("@/backend/local/system-prompt-compilation", "src/x.test.ts", aliases, paths) == compiler
    assert resolve("../backend/local/system-prompt-compilation.js", "src/a/x.test.ts", aliases, paths) == compiler
    assert resolve("../../backend/local", "src/tests/b/x.test.ts", aliases, paths) == "src/backend/local/index.ts"
    assert resolve("@earendil-works/pi-ai", "src/x.test.ts", aliases, paths) is None


def test_selection_rule() -> None:
    paths = {
        "src/backend/local/system-prompt-compilation.ts",
        "src/utils/frontmatter.ts",
        "src/backend/local/local-backend.ts",
    }
    aliases = [("@/", "src/")]
    skills = 'import { appendAvailableSkillsBlock } from "@/backend/local/system-prompt-compilation";'
    assert selection_reasons(skills, "src/a.test.ts", aliases, paths) == [
        "imports the compiler module (src/backend/local/system-prompt-compilation.ts), the skills block "
        "(appendAvailableSkillsBlock)"
    ]
    mocked = 'mock.module("../utils/frontmatter", () => ({}));'
    assert selection_reasons(mocked, "src/b/a.test.ts", aliases, paths) == [
        "imports the frontmatter parser (src/utils/frontmatter.ts)"
    ]
    backend = 'import { LocalBackend } from "@/backend/local/local-backend";\n'
    assert selection_reasons(backend + "listModels();", "src/a.test.ts", aliases, paths) == []
    assert selection_reasons(backend + "expect(p).toContain('<memory_update>')", "src/a.test.ts", aliases, paths) == [
        "imports LocalBackend (src/backend/local/local-backend.ts) and tests its prompt cache (memory_update)"
    ]


def test_bunfig_preloads() -> None:
    assert bunfig_preloads(b'[loader]\n".md" = "text"\n\n[test]\npreload = ["./scripts/p.ts"]\n') == ["scripts/p.ts"]
    assert bunfig_preloads(b'[test]\npreload = "./a.ts"\n[install]\nx = 1\n') == ["a.ts"]
    assert bunfig_preloads(b'[install]\npreload = ["./no.ts"]\n') == []
    assert bunfig_preloads(None) == []


def test_shim_forwards_the_compiler_and_finds_the_default_memory_dir() -> None:
    shim = shim_module("src/backend/local/system-prompt-compilation.ts", COMPILER)
    assert shim.upstream == "src/backend/local/system-prompt-compilation.conformance-upstream.ts"
    assert shim.forwarded == [
        "hashRawSystemPrompt",
        "compileLocalSystemPrompt",
        "compileAvailableSkillsBlock",
        "appendAvailableSkillsBlock",
    ]
    assert shim.kept == ["keptUpstream"] and shim.default_memory_dir == "getScopedMemoryFilesystemRoot"
    assert 'export * from "./system-prompt-compilation.conformance-upstream";' in shim.text
    assert (
        'import { getScopedMemoryFilesystemRoot as conformanceDefaultMemoryDir } from "@/agent/memory-filesystem"'
        in shim.text
    )
    bare = shim_module("src/backend/local/systemPromptCompilation.ts", "export function compileLocalSystemPrompt() {}")
    assert bare.default_memory_dir is None and "= undefined;" in bare.text


def test_the_target_table() -> None:
    assert [t.name for t in TARGETS] == ["compiler", "pre-commit-hook", "memory-tool", "post-turn-sync"]
    assert len(FORWARDED) == len(set(FORWARDED))  # an export is forwarded by one target only
    compiler, hook, tool, sync = TARGETS  # the compiler is the first row
    assert compiler.forwarded[0] == "compileLocalSystemPrompt" and hook.forwarded == ("PRE_COMMIT_HOOK_SCRIPT",)
    assert [f.op for f in hook.exports] == ["validate"]
    assert tool.forwarded == ("memory",) and [f.op for f in tool.exports] == ["memory_write"]
    assert tool.module_of({"src/tools/impl/Memory.ts": MEMORY_TOOL}.get) == "src/tools/impl/Memory.ts"  # 0.25.x
    view_tool = "export async function memory_view(args: any) {}"  # 0.34.7's memory.ts: a view tool, no memory()
    assert tool.module_of({"src/tools/impl/memory.ts": view_tool}.get) is None
    assert [f.op for f in sync.exports] == ["memory_reminder"]
    memory_git = (
        'import { getScopedMemoryFilesystemRoot } from "./memory-filesystem";\n'
        "export async function syncPendingMemoryCommitsAfterTurn(agentId: string, options = {}) {\n"
        '  const { getBackend } = await import("@/backend");\n}\n'
    )
    assert sync.module_of({"src/agent/memory-git.ts": memory_git}.get) == "src/agent/memory-git.ts"
    shim = sync.build("src/agent/memory-git.ts", memory_git)
    assert 'import { getScopedMemoryFilesystemRoot as conformanceScopedMemoryRoot } from "./memory-filesystem";' in (
        shim.text
    )
    assert "const CONFORMANCE_SYNC_MISSING: string | null = null;" in shim.text
    # where the hook lives: 0.25.x's memoryGit.ts; later memory-git-hooks.ts (memory-git.ts only re-exports it)
    v0_25 = {"src/agent/memoryGit.ts": "export const PRE_COMMIT_HOOK_SCRIPT = `#!/bin/sh`;\nexport function x() {}"}
    v0_30 = {
        "src/agent/memory-git.ts": 'export { PRE_COMMIT_HOOK_SCRIPT } from "./memory-git-hooks";',
        "src/agent/memory-git-hooks.ts": HOOK_MODULE,
    }
    assert hook.module_of(v0_25.get) == "src/agent/memoryGit.ts"
    assert hook.module_of(v0_30.get) == "src/agent/memory-git-hooks.ts"
    assert hook.module_of({}.get) is None and compiler.module_of(v0_30.get) is None
    assert compiler.module_of({"src/backend/local/systemPromptCompilation.ts": COMPILER}.get) == (
        "src/backend/local/systemPromptCompilation.ts"
    )


def test_the_hook_shim_forwards_the_constant_only() -> None:
    shim = hook_shim("src/agent/memory-git-hooks.ts", HOOK_MODULE)
    assert shim.target == "pre-commit-hook" and shim.upstream == "src/agent/memory-git-hooks.conformance-upstream.ts"
    assert shim.forwarded == ["PRE_COMMIT_HOOK_SCRIPT"] and shim.kept == ["installPreCommitHook"]
    assert 'export * from "./memory-git-hooks.conformance-upstream";' in shim.text
    text = placed_text(shim, {HOOK_COMMAND: "#!/bin/sh\nexec '/py' '/client.py' '/c.json'\n"})
    assert "export const PRE_COMMIT_HOOK_SCRIPT: string = \"#!/bin/sh\\nexec '/py' '/client.py' '/c.json'\\n\";" in text
    assert HOOK_COMMAND not in text


def test_the_memory_tool_shim_asks_upstreams_own_functions() -> None:
    shim = memory_tool_shim("src/tools/impl/memory.ts", MEMORY_TOOL)
    assert shim.forwarded == ["memory"] and shim.kept == ["keptTool"]
    assert 'import { getCurrentAgentId as conformanceCurrentAgentId } from "@/agent/context";' in shim.text
    assert 'import { resolveScopedMemoryDir as conformanceScopedMemoryDir } from "@/agent/memory-filesystem";' in (
        shim.text
    )
    assert 'await import("@/backend")' in shim.text and "const CONFORMANCE_MISSING: string | null = null;" in shim.text
    assert "function exchange(" in shim.text  # the bridge client follows the shim's own text
    bare = memory_tool_shim("src/tools/impl/Memory.ts", "export async function memory(args: any) {}")
    assert "the shim could not find upstream's getCurrentAgentId, resolveScopedMemoryDir, getBackend" in bare.text


def test_selection_per_target(tmp_path: Path) -> None:
    paths = {"src/agent/memoryGit.ts", "src/agent/memory-git-hooks.ts", "src/tools/impl/memory.ts"}
    aliases = [("@/", "src/")]
    named = 'import { PRE_COMMIT_HOOK_SCRIPT } from "../../agent/memoryGit";'
    assert selection_reasons(named, "src/tests/agent/x.test.ts", aliases, paths) == [
        "imports the pre-commit hook (PRE_COMMIT_HOOK_SCRIPT from src/agent/memoryGit.ts)"
    ]
    destructured = 'const { memory } = await import("@/tools/impl/memory");'
    assert selection_reasons(destructured, "src/tools/x.test.ts", aliases, paths) == [
        "imports the memory tool (memory from src/tools/impl/memory.ts)"
    ]
    sync = 'import {\n  getGitRemoteUrl,\n  syncPendingMemoryCommitsAfterTurn,\n} from "./memory-git";'
    assert selection_reasons(sync, "src/agent/x.test.ts", aliases, paths | {"src/agent/memory-git.ts"}) == [
        "imports the post-turn memory sync (syncPendingMemoryCommitsAfterTurn from src/agent/memory-git.ts)"
    ]
    other = 'import { getMemoryRepoDir } from "../../agent/memoryGit";'  # the module, not the hook: not selected
    assert selection_reasons(other, "src/tests/agent/x.test.ts", aliases, paths) == []
    files = {**hook_fixture_files(), **fixture_files()}
    for path, source in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source or "")
    selected = {f.path: f for f in select_tests(tmp_path, set(files))}
    assert selected[HOOK_TEST_FILE].targets == ["pre-commit-hook"]
    assert selected[HOOK_TEST_FILE].imports == ["PRE_COMMIT_HOOK_SCRIPT"]
    assert selected[TEST_FILE].targets == ["compiler"]
    assert [f.path for f in select_tests(tmp_path, set(files), TARGETS[1:])] == [HOOK_TEST_FILE]


def test_the_hook_clients_exit_and_lines() -> None:
    refused = {"ok": True, "validation": {"accepted": False, "messages": ["Frontmatter validation failed:", "  a"]}}
    assert hook_client.outcome(refused) == (["Frontmatter validation failed:", "  a"], 1)
    assert hook_client.outcome({"ok": True, "validation": {"accepted": True, "messages": []}}) == ([], 0)
    assert hook_client.outcome({"ok": False, "unsupported": "op 'validate'"}) == (
        ["conformance: not applicable: op 'validate'"],
        1,
    )
    lines, code = hook_client.outcome({"ok": False, "error": "boom"})
    assert lines == ["conformance: the implementation under test failed: boom"] and code == 1
    lines, code = hook_client.outcome({"ok": True, "validation": {"accepted": "yes", "messages": []}})
    assert code == 1 and "accepted is not a boolean" in lines[0]  # never a commit on a malformed answer


def test_the_hook_client_gives_the_implementation_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = tmp_path / "repo"
    (top / ".git" / "hooks").mkdir(parents=True)
    (top / "a.md").write_text("work tree")
    (top / ".git" / "index").write_bytes(b"old index")
    (top / ".git" / "index.lock").write_bytes(b"the index being committed")
    (top / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexec hook_client.py\n")
    monkeypatch.setenv("GIT_INDEX_FILE", str(top / ".git" / "index.lock"))  # what git sets for its hooks
    copy = hook_client.snapshot(top, tmp_path / "scratch")
    assert copy != top and (copy / "a.md").read_text() == "work tree"
    assert (copy / ".git" / "index").read_bytes() == b"the index being committed"
    assert not (copy / ".git" / "index.lock").exists() and not (copy / ".git" / "hooks" / "pre-commit").exists()
    assert (top / ".git" / "hooks" / "pre-commit").exists()  # the test's repository untouched
    (tmp_path / "worktree").mkdir()
    (tmp_path / "worktree" / ".git").write_text("gitdir: elsewhere\n")  # not copied: the repository itself
    assert hook_client.snapshot(tmp_path / "worktree", tmp_path / "scratch2") == tmp_path / "worktree"


def test_junit_and_call_log_attribution(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="src/a.test.ts" file="src/a.test.ts">'
        '<testsuite name="outer" file="src/a.test.ts"><testcase name="one" line="3"/>'
        '<testcase name="two"><failure type="AssertionError" message="expect(x).toBe(y)">stack</failure></testcase>'
        '<testcase name="three"><skipped/></testcase><testcase name="four"><skipped message="TODO"/></testcase>'
        '</testsuite><testcase name="top"/></testsuite></testsuites>'
    )
    tests = read_junit(junit, "src/a.test.ts")
    assert [(t.name, t.outcome) for t in tests] == [
        ("outer > one", Outcome.PASSED),
        ("outer > two", Outcome.FAILED),
        ("outer > three", Outcome.SKIPPED),
        ("outer > four", Outcome.TODO),
        ("top", Outcome.PASSED),
    ]
    assert tests[1].message == "AssertionError: expect(x).toBe(y)" and tests[0].line == 3
    run = FileRun("src/a.test.ts", 1, 0.1, tests)
    attribute_calls(
        run, [{"call": "setup"}, {"test": 1}, {"call": "a"}, {"test": 2}, {"call": "b"}, {"call": "c"}, {"test": 3}]
    )
    assert run.attributed and run.calls_by_test == [-1, 0, 1, 1]
    short = FileRun("src/a.test.ts", 1, 0.1, tests)
    attribute_calls(short, [{"test": 1}, {"call": "a"}])
    assert not short.attributed  # three tests ran, one mark: the calls are the file's


def test_the_call_that_produced_the_value() -> None:
    compiled = {"call": "compileLocalSystemPrompt", "answer": {"ok": True, "record": {"content": "hello\nworld"}}}
    hashed = {"call": "hashRawSystemPrompt", "answer": {"ok": True, "record": {"rawSystemHash": "ab"}}}
    message = (
        'AssertionError: expect(received).toContain(expected)\n\nExpected to contain: "x"\nReceived: "hello\\nworld"\n'
    )
    assert producing_call([compiled, hashed], message)[0] is compiled  # not the last call: the one received
    assert producing_call([compiled, hashed], "Received: 3")[0] is hashed  # nothing to match: the last call
    assert producing_call([], message) == (None, "the test's last forwarded call")


def test_mojibake_hint() -> None:
    assert "'└'" in (mojibake_of([{"answer": {"block": "\n\u00e2\u0094\u0094\u00e2\u0094\u0080 pdf/"}}]) or "")
    assert mojibake_of([{"answer": {"block": "café └── pdf/"}}]) is None


# --- whole runs on the fixture repository ------------------------------------------------------------------


@needs_bun
def test_fixture_verdicts(fixture_repo: Upstream, cache: Path) -> None:
    before = snapshot(fixture_repo.path)
    result = run_fixture(fixture_repo)
    assert snapshot(fixture_repo.path) == before  # nothing written inside the clone
    assert [f.path for f in result.files] == [
        "src/backend/local-system-prompt-compilation.test.ts",
        "src/backend/missing-package.test.ts",
        "src/tests/utils/frontmatter.test.ts",
    ]
    assert result.kept == ["keptUpstream"]
    assert any("definitely-not-installed-package is not installed" in note for note in result.notes)
    found = verdicts(result)
    tiny = f"{TEST_FILE} > tiny compiler > "
    for name in (
        "injects core memory",
        "hashes the raw prompt",
        "asks upstream's default memory directory",
        "renders the skills block",
        "throws on an invalid date",
    ):
        assert found[tiny + name][0] == Verdict.PASS, (name, found[tiny + name])
    assert found[tiny + "keeps what is not forwarded"] == (Verdict.NOT_APPLICABLE, NO_CALL_NOTE)
    assert found[tiny + "is broken upstream"][0] == Verdict.BROKEN
    assert found[tiny + "is skipped upstream"][0] == Verdict.NOT_APPLICABLE
    assert "frontmatter parser directly" in found["src/tests/utils/frontmatter.test.ts > parses a body"][1]
    missing = found[f"src/backend/missing-package.test.ts > {FILE_LEVEL}"]
    assert missing[0] == Verdict.BROKEN and "does not load with upstream's own modules" in missing[1]
    assert (
        result.counts().line() == "upstream-tests: 5 passed, 0 failed, 3 not applicable, 2 broken (control: 7 passed)"
    )
    compiler = fixture_repo.path / "src/backend/local/system-prompt-compilation.ts"
    tree = upstream_tests.trees_root() / "trees" / upstream_tests.repo_key(fixture_repo.path)
    assert (tree / "src/backend/local/system-prompt-compilation.ts").read_bytes() == compiler.read_bytes()
    assert not (tree / "src/backend/local/system-prompt-compilation.conformance-upstream.ts").exists()
    assert not (tree / ".letta/left-behind.json").exists()  # swept after each file


@needs_bun
def test_planted_bug_fails_with_upstreams_assertion(fixture_repo: Upstream, cache: Path, tmp_path: Path) -> None:
    result = run_fixture(fixture_repo, "content")
    failed = [t for t in result.tests if t.verdict == Verdict.FAIL]
    assert [t.name for t in failed] == ["tiny compiler > injects core memory"]
    test = failed[0]
    assert test.fault == "implementation" and "expect(received).toBe(expected)" in test.message
    assert '"base MEMORY agent-1 conv-1 /m!"' in test.message  # upstream's own words: what was received
    assert test.call is not None and test.call["call"] == "compileLocalSystemPrompt"
    assert test.call_basis == "its answer holds the value upstream's assertion received"
    assert test.call["site"].startswith(f"{TEST_FILE}:") and test.call["request"]["memoryDir"] == "/m"
    assert test.call["request"]["profile"] == "letta-code@0.30.28"
    run = upstream_tests.UpstreamRun("cmd:fixture --bug content", [result], ["conformance", "upstream-tests"])
    write_reports(UpstreamReport(run, timing=False), tmp_path / "report", UPSTREAM_TESTS)
    stored = json.loads((tmp_path / "report" / "report.json").read_text())
    assert stored == report_json(run, timing=False) and stored["schema"] == "letta-conformance/upstream-tests/1"
    assert stored["summary"]["failed"] == 1 and "timing" not in stored["revisions"][0]
    page = (tmp_path / "report" / "index.html").read_text()
    assert "expect(received).toBe(expected)" in page and "the call that produced the value" in page
    lines = terminal_lines(run)
    assert lines[-1] == "upstream-tests: 4 passed, 1 failed, 3 not applicable, 2 broken (control: 7 passed)"
    assert any(line.startswith("          call: compileLocalSystemPrompt at src/backend/") for line in lines)


@needs_bun
def test_unsupported_and_failing_implementations(fixture_repo: Upstream, cache: Path) -> None:
    found = verdicts(run_fixture(fixture_repo, "no-skills"))
    skills = found[f"{TEST_FILE} > tiny compiler > renders the skills block"]
    assert skills[0] == Verdict.NOT_APPLICABLE and "answered unsupported (op 'skills_block')" in skills[1]
    found = verdicts(run_fixture(fixture_repo, "error"))
    injects = found[f"{TEST_FILE} > tiny compiler > injects core memory"]
    assert (
        injects[0] == Verdict.FAIL
        and "the implementation failed: compileLocalSystemPrompt: planted failure" in injects[1]
    )


@pytest.fixture
def hook_repo(tmp_path: Path) -> Upstream:
    upstream = Upstream(tmp_path / "letta-code", git_env_for(tmp_path / "home", tmp_path))
    upstream.commit("a tiny pre-commit hook and its tests", hook_fixture_files())
    return upstream


@needs_bun
def test_the_hook_target(hook_repo: Upstream, cache: Path) -> None:
    before = snapshot(hook_repo.path)
    result = run_fixture(hook_repo)
    assert snapshot(hook_repo.path) == before  # nothing written inside the clone
    assert [s["target"] for s in result.swaps] == ["pre-commit-hook"] and result.forwarded == ["PRE_COMMIT_HOOK_SCRIPT"]
    found = verdicts(result)
    assert found[f"{HOOK_TEST_FILE} > accepts good content"][0] == Verdict.PASS
    assert found[f"{HOOK_TEST_FILE} > refuses BAD content"][0] == Verdict.PASS
    assert found[f"{HOOK_TEST_FILE} > commits without the hook"] == (Verdict.NOT_APPLICABLE, NO_CALL_NOTE)
    lines = terminal_lines(upstream_tests.UpstreamRun("cmd:fixture", [result]))
    assert (
        "  target pre-commit-hook: 1 file(s), 2 passed, 0 failed, 1 not applicable, 0 broken (control: 3/3 passed)"
        in (lines)
    )
    refused = next(t for t in result.tests if t.name == "refuses BAD content")
    assert refused.calls == 1  # the hook's call, attributed to the test that committed
    call = result.shim_runs[0].calls[0]
    assert call["call"] == "PRE_COMMIT_HOOK_SCRIPT" and call["request"]["op"] == "validate"
    assert call["request"]["profile"] == "letta-code@0.30.28"
    assert Path(call["request"]["memoryDir"]).parent.name.startswith("conformance-hook-repo-")  # a copy (snapshot)
    tree = upstream_tests.trees_root() / "trees" / upstream_tests.repo_key(hook_repo.path)
    assert (tree / "src/agent/memory-git-hooks.ts").read_text() == HOOK_MODULE  # the shim undone
    # a wrong answer fails upstream's assertion; unsupported and error answers never pass
    bugged = verdicts(run_fixture(hook_repo, "hook-accepts"))[f"{HOOK_TEST_FILE} > refuses BAD content"]
    assert bugged == (Verdict.FAIL, "upstream's assertion fails on what the implementation answered")
    unsupported = verdicts(run_fixture(hook_repo, "no-validate"))
    for name in ("accepts good content", "refuses BAD content"):
        verdict, reason = unsupported[f"{HOOK_TEST_FILE} > {name}"]
        assert verdict == Verdict.NOT_APPLICABLE and "answered unsupported (op 'validate')" in reason, (name, reason)
    failed = verdicts(run_fixture(hook_repo, "error"))[f"{HOOK_TEST_FILE} > accepts good content"]
    assert failed == (Verdict.FAIL, "the implementation failed: PRE_COMMIT_HOOK_SCRIPT: planted failure")


@needs_bun
def test_the_memory_tool_target(tmp_path: Path, cache: Path) -> None:
    repo = Upstream(tmp_path / "letta-code", git_env_for(tmp_path / "home", tmp_path))
    repo.commit("a tiny memory tool and its tests", memory_tool_fixture_files())
    result = run_fixture(repo)
    found = verdicts(result)
    assert found[f"{MEMORY_TOOL_TEST_FILE} > writes with a local backend"] == (Verdict.PASS, "")
    assert found[f"{MEMORY_TOOL_TEST_FILE} > requires a reason"] == (Verdict.PASS, "")
    assert found[f"{MEMORY_TOOL_TEST_FILE} > writes with a remote backend"] == (Verdict.PASS, "")
    local, remote = (call["request"] for call in result.shim_runs[0].calls[:2])
    assert local == {
        "op": "memory_write",
        "memoryDir": "/m",
        "command": "create",
        "args": {"reason": "r", "file_path": "system/a.md"},
        "agentId": "agent-1",
        "agentName": "Bob",
        "syncMode": "local",
        "profile": "letta-code@0.30.28",
    }
    assert remote["syncMode"] == "remote"  # the backend's capabilities, as the tool reads them
    # an implementation that does not model the remote sync answers unsupported: not applicable, never a pass
    unmodelled = verdicts(run_fixture(repo, "no-remote"))[f"{MEMORY_TOOL_TEST_FILE} > writes with a remote backend"]
    assert unmodelled[0] == Verdict.NOT_APPLICABLE and "the fixture's remote sync" in unmodelled[1]
    tree = upstream_tests.trees_root() / "trees" / upstream_tests.repo_key(repo.path)
    assert (tree / "src/tools/impl/memory.ts").read_text() == MEMORY_TOOL  # the shim undone


@needs_bun
def test_an_interrupted_shim_is_undone(fixture_repo: Upstream, cache: Path) -> None:
    run_fixture(fixture_repo)
    tree = upstream_tests.trees_root() / "trees" / upstream_tests.repo_key(fixture_repo.path)
    shim = shim_module("src/backend/local/system-prompt-compilation.ts", COMPILER)
    (tree / shim.upstream).write_text(COMPILER)  # what a run killed in the shim run leaves
    (tree / shim.compiler).write_text(shim.text)
    (tree / upstream_tests.SHIM_MARKER).write_text(json.dumps({"compiler": shim.compiler, "upstream": shim.upstream}))
    result = run_fixture(fixture_repo)
    assert result.counts().passed == 5 and result.control_passed == 7  # the control run had upstream's module
    assert (tree / shim.compiler).read_text() == COMPILER and not (tree / shim.upstream).exists()
    assert not (tree / upstream_tests.SHIM_MARKER).exists()


@needs_bun
def test_cli(fixture_repo: Upstream, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    impl = f"cmd:{sys.executable} {IMPL}"
    assert main(["upstream-tests", "--git", str(fixture_repo.path), "--impl", impl, "-q"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("upstream-tests: 5 passed, 0 failed")
    code = main(
        [
            "upstream-tests",
            "--git",
            f"{fixture_repo.path}@HEAD",
            "--impl",
            f"{impl} --bug content",
            "--report",
            str(tmp_path / "r"),
            "-q",
        ]
    )
    assert code == 1 and (tmp_path / "r" / "index.html").exists()
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "upstream-tests: 4 passed, 1 failed, 3 not applicable, 2 broken (control: 7 passed)"


def test_cli_usage_errors(fixture_repo: Upstream, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upstream-tests", "--git", f"{fixture_repo.path}@no-such-rev"]) == 2
    assert "no-such-rev" in capsys.readouterr().err
    assert main(["upstream-tests", "--git", str(fixture_repo.path), "--impl", "letta-server:0.16.8"]) == 2
    assert "another product" in capsys.readouterr().err
    assert main(["upstream-tests", "--git", str(fixture_repo.path), "--impl", "python-cli"]) == 2
    assert main(["upstream-tests", "--git", "/no/such/clone"]) == 2
    fixture_repo.commit("an unreleased version", {"package.json": json.dumps({"version": "0.24.13"})})
    assert main(["upstream-tests", "--git", str(fixture_repo.path)]) == 2
    assert "a version no profile maps" in capsys.readouterr().err


# --- upstream's real history -------------------------------------------------------------------------------

CLONE = os.environ.get("LETTA_CODE_GIT")


@pytest.mark.integration
@pytest.mark.skipif(not CLONE, reason="set LETTA_CODE_GIT to a local clone of letta-ai/letta-code")
def test_upstream_v0_30_28_against_the_port_and_a_planted_bug(tmp_path: Path) -> None:
    assert CLONE is not None
    reference = GitReference(Path(CLONE), "v0.30.28")
    result = upstream_tests.run_revision(reference, ImplSpec.parse("python"), upstream_tests.Options(), ensure_bun())
    assert result.counts().line() == (
        "upstream-tests: 58 passed, 0 failed, 70 not applicable, 0 broken (control: 128 passed)"
    )
    by_target = {row["target"]: (row["pass"], row["fail"], row["na"], row["broken"]) for row in target_rows(result)}
    assert by_target == {
        "compiler": (21, 0, 29, 0),
        "pre-commit-hook": (21, 0, 0, 0),
        "memory-tool": (13, 0, 0, 0),  # upstream's writes are remote ones (syncMode), committed and not pushed
        "post-turn-sync": (3, 0, 41, 0),
    }
    planted = Path(__file__).with_name("planted_upstream_bug_impl.py")
    bugged = ImplSpec.parse(f"cmd:{sys.executable} {planted} --bug midnight")
    compiler_only = upstream_tests.Options(targets=("compiler",))
    result = upstream_tests.run_revision(reference, bugged, compiler_only, ensure_bun())
    failed = [t for t in result.tests if t.verdict == Verdict.FAIL]
    assert [t.name for t in failed] == [
        "local system prompt compilation > injects MemFS system files and metadata into CORE_MEMORY"
    ]
    assert "System prompt last recompiled: 2026-05-04 12:00:00 AM UTC+0000" in failed[0].message
