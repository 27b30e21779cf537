"""Building a revision's modules from source (harness.acquire.revision_build), git: references
(harness.runners.git_reference), the history scan, commit bisect and the history table
(harness.tools.history.scan, revision_corpus, history), on small repositories these tests create with
their own minimal TypeScript modules; and, when LETTA_CODE_GIT names a local clone of letta-code,
against upstream's real history."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import OFFLINE, git_env_for

from harness.acquire import revision_build
from harness.acquire.releases import ensure_bun
from harness.acquire.revision_build import build_revision, build_worktree
from harness.acquire.revision_source import (
    BuildError,
    bun_pragma,
    load_time_packages,
    locked_versions,
    read_worktree,
    release_build_entry,
)
from harness.core.reference import ReferenceSpec
from harness.runners import git_reference
from harness.runners.git_reference import GitReference, UnknownRevisionProfile, revision_profile
from harness.tools.history import revision_corpus
from harness.tools.history import scan as history_scan
from harness.tools.history import table as history

pytestmark = pytest.mark.skipif(OFFLINE, reason="needs the pinned bun (LETTA_CONFORMANCE_OFFLINE=1)")

HELPER = """const SUFFIX = ["!"].join("");
export function shout(text: string): string {
  return `${text}${SUFFIX}`;
}
"""

COMPILER = """import { shout } from "@/util/text";

export function compileLocalSystemPrompt(options: { agent: { system: string } }) {
  return { content: shout(options.agent.system) + "%s" };
}

export async function reload() {
  return import("./%s"); // a lazy import: bun wraps the module in __esm, as upstream's is
}
"""

OLD_NAME, NEW_NAME = "systemPromptCompilation.ts", "system-prompt-compilation.ts"

BUILD_JS = """await Bun.build({
  entrypoints: ["%s"],
  outdir: ".",
  target: "node",
});
"""

TINY_CASE = """id: tiny
description: one memory file
repo:
  commits:
    - files:
        system/persona.md: "hello\\n"
"""

TSCONFIG = '{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}\n'


class Upstream:
    """A tiny letta-code look-alike: a compiler module, an alias import, a build entry."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path, self.env = path, env
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(self.path), *args], env=self.env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def write(self, files: dict[str, str | None]) -> None:
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


def initial_files(version: str = "0.25.3", marker: str = "") -> dict[str, str | None]:
    return {
        "package.json": json.dumps({"name": "@letta-ai/letta-code", "version": version}),
        "tsconfig.json": TSCONFIG,
        "build.js": BUILD_JS % "./src/index.ts",
        "src/index.ts": '#!/usr/bin/env bun\nimport "./backend/local/systemPromptCompilation.ts";\n',
        "src/standalone-entry.ts": 'import "./backend/local/systemPromptCompilation.ts";\n',
        "src/util/text.ts": HELPER,
        "src/backend/local/systemPromptCompilation.ts": COMPILER % (marker, OLD_NAME),
        "README.md": "fixture\n",
    }


@pytest.fixture(scope="session")
def bun() -> Path:
    return ensure_bun()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bun: Path) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(root))
    for module in (revision_build, git_reference, history_scan):
        monkeypatch.setattr(module, "ensure_bun", lambda: bun)
    return root


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return Upstream(tmp_path / "letta-code", git_env_for(tmp_path / "home", tmp_path))


def snapshot(path: Path, contents: bool = True) -> dict[str, tuple[int, int, str]]:
    """Every file under path (the .git directory too) with its size, mtime and (with `contents`) sha256."""
    found = {}
    for item in sorted(path.rglob("*")):
        if item.is_file():
            stat = item.stat()
            digest = hashlib.sha256(item.read_bytes()).hexdigest() if contents else ""
            found[str(item.relative_to(path))] = (stat.st_size, stat.st_mtime_ns, digest)
    return found


# --- the rules, as functions ---------------------------------------------------------------------


def test_release_build_entry_and_pragma_rule() -> None:
    assert release_build_entry(b'await Bun.build({\n  entrypoints: ["./src/index.ts"],\n})') == "src/index.ts"
    assert release_build_entry(b"entrypoints: ['./src/standalone-entry.ts', './x.ts']") == "src/standalone-entry.ts"
    assert release_build_entry(None) is None
    assert bun_pragma(b"#!/usr/bin/env bun\nimport x;\n")
    assert not bun_pragma(b"#!/usr/bin/env node\n")
    assert not bun_pragma(b"import x;\n// #!/usr/bin/env bun\n")
    assert not bun_pragma(None)


def test_load_time_packages_are_top_level_imports_of_packages() -> None:
    module = (
        'import { a } from "node:fs";\nimport {\n  b,\n  c\n} from "@scope/pkg/sub/path";\n'
        'import d from "plain";\nimport "side-effect";\nimport x from "./local.js";\n'
        'const later = () => import("lazy-package");\nimport { e } from "path";\n'
    )
    assert load_time_packages(module) == ["@scope/pkg", "plain", "side-effect"]


def test_locked_versions_read_bun_lock_with_trailing_commas() -> None:
    lock = (
        b'{\n "lockfileVersion": 1,\n "packages": {\n  "plain": ["plain@1.2.3", "", {}, "sha512-x"],\n'
        b'  "@scope/pkg": ["@scope/pkg@0.4.0", "", {},],\n },\n}\n'
    )
    assert locked_versions(lock, ["@scope/pkg", "plain"]) == {"@scope/pkg": "0.4.0", "plain": "1.2.3"}
    with pytest.raises(BuildError, match="no entry for missing"):
        locked_versions(lock, ["missing"])
    with pytest.raises(BuildError, match=r"no bun\.lock"):
        locked_versions(None, ["plain"])


def test_git_reference_parse() -> None:
    assert GitReference.parse("git:/src/letta-code") == GitReference(Path("/src/letta-code"), "HEAD")
    assert GitReference.parse("git:/src/letta-code@v0.25.9") == GitReference(Path("/src/letta-code"), "v0.25.9")
    parsed = GitReference.parse("git:/a@b/letta@91e3790f6#letta-code@0.25.9")
    assert parsed == GitReference(Path("/a@b/letta"), "91e3790f6", "letta-code@0.25.9")
    assert parsed.spec().kind == "git" and parsed.label == "git:/a@b/letta@91e3790f6"
    with pytest.raises(ValueError):
        GitReference.parse("git:@HEAD")


def test_profile_rule_never_defaults() -> None:
    assert revision_profile("0.25.3") == "letta-code@0.25.3"
    assert revision_profile("0.32.17") == "letta-code@0.32.14"
    with pytest.raises(UnknownRevisionProfile, match=r"0\.24\.13, a version no profile maps"):
        revision_profile("0.24.13", where="git:x@a497fcee4")
    with pytest.raises(UnknownRevisionProfile, match="no version"):
        revision_profile(None)
    assert revision_profile("0.24.13", "letta-code@0.25.3") == "letta-code@0.25.3"


# --- building ------------------------------------------------------------------------------------


def test_build_under_both_entry_names_with_alias_and_pragma(upstream: Upstream, cache: Path, bun: Path) -> None:
    old = upstream.commit("compiler, old name", initial_files())
    renamed = upstream.commit(
        "rename the compiler",
        {
            "src/backend/local/systemPromptCompilation.ts": None,
            "src/backend/local/system-prompt-compilation.ts": COMPILER % ("", NEW_NAME),
        },
    )
    entry = upstream.commit("build from the standalone entry", {"build.js": BUILD_JS % "./src/standalone-entry.ts"})
    before = snapshot(upstream.path)

    first = build_revision(upstream.path, old, bun=bun)
    assert first.compiler_entry == "src/backend/local/systemPromptCompilation.ts"
    assert first.release_entry == "src/index.ts" and first.pragma
    text = Path(first.compiler.path).read_text()
    assert text.startswith("// @bun\n")
    assert "// src/util/text.ts" in text and "// src/backend/local/systemPromptCompilation.ts" in text  # `@/` resolved
    assert "var init_systemPromptCompilation = __esm(" in text
    assert first.version == "0.25.3"
    assert sorted(first.compiler.inputs) == ["src/backend/local/systemPromptCompilation.ts", "src/util/text.ts"]

    second = build_revision(upstream.path, renamed, bun=bun)
    assert second.compiler_entry == "src/backend/local/system-prompt-compilation.ts" and second.pragma

    third = build_revision(upstream.path, "HEAD", bun=bun)
    assert third.commit == entry and not third.pragma and third.release_entry == "src/standalone-entry.ts"
    assert not Path(third.compiler.path).read_text().startswith("// @bun")
    assert third.module_key != second.module_key  # no compiler file changed, the module did

    assert snapshot(upstream.path) == before, "the build wrote inside the repository"
    assert Path(first.compiler.path).is_relative_to(cache / "git-builds" / old)


def test_builds_are_cached_by_commit_and_by_module(
    upstream: Upstream, cache: Path, bun: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = upstream.commit("one", initial_files())
    two = upstream.commit("docs only", {"README.md": "changed\n"})
    a, b = build_revision(upstream.path, one, bun=bun), build_revision(upstream.path, two, bun=bun)
    assert a.module_key == b.module_key
    assert (cache / "git-builds" / "modules" / f"{a.module_key}.mjs").exists()
    assert len(list((cache / "git-builds" / "modules").glob("*.mjs"))) == 1

    def no_build(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(revision_build, "_bun_build", no_build)
    assert build_revision(upstream.path, one, bun=bun) == a
    # A module altered in the cache is built again, not trusted.
    Path(a.compiler.path).write_text("tampered")
    with pytest.raises(AssertionError, match="built again"):
        build_revision(upstream.path, one, bun=bun)


def test_a_failing_build_is_an_error_with_the_build_message(upstream: Upstream, cache: Path, bun: Path) -> None:
    upstream.commit("one", initial_files())
    broken = upstream.commit("broken", {"src/util/text.ts": "export function shout(: string {\n"})
    with pytest.raises(
        BuildError, match=r"(?s)bun build src/backend/local/systemPromptCompilation\.ts failed.* at src/util/text\.ts:1"
    ):
        build_revision(upstream.path, broken, bun=bun)
    assert json.loads((cache / "git-builds" / broken / "failed.json").read_text())["error"].startswith("bun build")
    with pytest.raises(BuildError, match="bun build"):  # remembered, not retried
        build_revision(upstream.path, broken, bun=bun)
    none = upstream.commit("no compiler", {"src/backend/local/systemPromptCompilation.ts": None})
    with pytest.raises(BuildError, match="no compiler at this revision"):
        build_revision(upstream.path, none, bun=bun)
    with pytest.raises(BuildError, match=r"unknown revision|bad revision|Needed a single revision"):
        build_revision(upstream.path, "no-such-rev", bun=bun)


def test_history_scan_groups_identical_modules(upstream: Upstream, cache: Path) -> None:
    first = upstream.commit("one", initial_files())
    upstream.commit("docs", {"README.md": "more\n"})
    upstream.commit("unrelated source", {"src/other.ts": "export const unrelated = 1;\n"})
    upstream.commit("compiler change", {"src/backend/local/systemPromptCompilation.ts": COMPILER % ("?", OLD_NAME)})
    upstream.commit("helper change", {"src/util/text.ts": HELPER.replace('"!"', '"!!"')})
    upstream.commit("build entry", {"build.js": BUILD_JS % "./src/standalone-entry.ts"})
    upstream.commit("broken", {"src/util/text.ts": "export function shout(: string {\n"})
    upstream.commit("fixed", {"src/util/text.ts": HELPER})

    commits = history_scan.first_parent_commits(upstream.path, first, "HEAD")
    assert [c.subject for c in commits][:2] == ["one", "docs"] and len(commits) == 8
    rows = history_scan.scan(upstream.path, commits)
    assert [r.built for r in rows] == [True, False, False, True, True, True, True, True]
    modules = [r.module for r in rows]
    assert modules[0] == modules[1] == modules[2]
    assert len({m for m in modules if m}) == 5 and modules[6] is None and "bun build" in (rows[6].error or "")
    assert [r.pragma for r in rows[:6]] == [True, True, True, True, True, False]
    # the incremental walk and building every commit on its own agree
    assert [r.module for r in history_scan.scan(upstream.path, commits, exhaustive=True)] == modules


def test_bisect_and_history_table_run_the_driver(upstream: Upstream, cache: Path, tmp_path: Path) -> None:
    start = upstream.commit("one", initial_files())
    for n in range(4):
        upstream.commit(f"docs {n}", {"README.md": f"{n}\n"})
    changed = upstream.commit("the output changes", {"src/util/text.ts": HELPER.replace('"!"', '"?"')})
    upstream.commit("after", {"README.md": "after\n"})
    case = tmp_path / "cases" / "compile" / "tiny.yaml"  # the loader wants id == file name
    case.parent.mkdir(parents=True)
    case.write_text(TINY_CASE)
    scenario = revision_corpus.load_cases([case])[0]

    result = revision_corpus.bisect_commits(upstream.path, scenario, start, "HEAD")
    assert result.first_changed == changed
    assert len(result.tested) <= 5 < len(result.candidates)
    assert result.what == ["content/prompt"]

    rows = history_scan.scan(upstream.path, history_scan.first_parent_commits(upstream.path, start, "HEAD"))
    found, runs = history.history_table(upstream.path, rows, [scenario])
    assert [c.commit for c in found] == [changed] and found[0].cases == {"content/prompt": ["tiny"]}
    assert len(runs) == 2
    table = history.table_markdown(found, rows, 1.0, "conformance history")
    assert "the output changes" in table and "7 first-parent commits" in table


def test_git_reference_runner_reports_the_build_error(upstream: Upstream, cache: Path, tmp_path: Path) -> None:
    upstream.commit("broken", {**initial_files(), "src/util/text.ts": "export function shout(: string {\n"})
    case = tmp_path / "cases" / "compile" / "tiny.yaml"  # the loader wants id == file name
    case.parent.mkdir(parents=True)
    case.write_text(TINY_CASE)
    scenario = revision_corpus.load_cases([case])[0]
    spec, gits = revision_corpus.git_spec(upstream.path, "HEAD")
    run = revision_corpus.run_references([spec], gits, [scenario])[spec.label]
    assert "bun build" in run.errors["tiny"] and "text.ts" in run.errors["tiny"]


# --- a checkout's work tree (`checkout:PATH`) ----------------------------------------------------


def test_a_checkout_builds_from_its_work_tree_and_writes_nothing_there(
    upstream: Upstream, cache: Path, bun: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = upstream.commit("one", {**initial_files(), ".gitignore": "src/ignored.ts\n"})
    upstream.write(
        {
            "src/backend/local/systemPromptCompilation.ts": COMPILER % ("UNCOMMITTED", OLD_NAME),  # an edit
            "src/untracked.ts": "export const untracked = 1;\n",  # untracked, not ignored: read
            "src/ignored.ts": "export const ignored = 1;\n",  # ignored: not read
            "src/standalone-entry.ts": None,  # deleted in the work tree: absent
        }
    )
    entries, _ = read_worktree(upstream.path)
    assert "src/untracked.ts" in entries and "src/ignored.ts" not in entries
    assert "src/standalone-entry.ts" not in entries and "README.md" not in entries  # SOURCE_PATHS only
    before = snapshot(upstream.path)

    build = build_worktree(upstream.path, bun=bun)
    assert build.commit.startswith("worktree-") and build.commit != commit
    assert build.version == "0.25.3" and build.pragma
    assert "UNCOMMITTED" in Path(build.compiler.path).read_text()
    assert build_revision(upstream.path, commit, bun=bun).module_key != build.module_key  # the commit has no edit
    assert snapshot(upstream.path) == before, "the build wrote inside the checkout"
    assert not (upstream.path / "node_modules").exists() and not (upstream.path / "letta.js").exists()
    assert Path(build.compiler.path).is_relative_to(cache / "git-builds" / build.commit)

    builds = []
    real_build = revision_build._bun_build
    monkeypatch.setattr(revision_build, "_bun_build", lambda *a: builds.append(a) or real_build(*a))
    assert build_worktree(upstream.path, bun=bun) == build and not builds  # unchanged: from the cache
    upstream.write({"src/util/text.ts": HELPER.replace('"!"', '"?!"')})
    edited = build_worktree(upstream.path, bun=bun)
    assert len(builds) == 1 and edited.commit != build.commit and '"?!"' in Path(edited.compiler.path).read_text()
    assert snapshot(upstream.path, contents=False).keys() == before.keys()


def test_a_checkout_is_served_by_the_git_runner_and_never_memoized(
    upstream: Upstream, cache: Path, tmp_path: Path
) -> None:
    from harness.runners.references import default_runner, profile_for_reference
    from harness.runners.result_store.key import artifact_identity

    upstream.commit("one", initial_files())
    upstream.write({"src/backend/local/systemPromptCompilation.ts": COMPILER % ("UNCOMMITTED", OLD_NAME)})
    spec = ReferenceSpec.parse(f"checkout:{upstream.path}")
    assert GitReference.of_spec(spec) == GitReference(upstream.path, worktree=True)
    assert GitReference.of_spec(spec).spec() == spec and GitReference.of_spec(spec).label == spec.label
    assert profile_for_reference(spec, None) == "letta-code@0.25.3"  # the work tree's version, as git: does
    upstream.write({"package.json": json.dumps({"name": "@letta-ai/letta-code", "version": "0.24.13"})})
    with pytest.raises(UnknownRevisionProfile, match=r"checkout:.*0\.24\.13, a version no profile maps"):
        profile_for_reference(spec, None)
    assert profile_for_reference(spec, "letta-code@0.25.3") == "letta-code@0.25.3"

    runner = default_runner(spec, tmp_path / "h", tmp_path, 60.0)
    assert isinstance(runner, git_reference.GitReferenceRunner) and runner.reference.worktree
    assert runner.name == spec.runner_name
    assert artifact_identity(runner) is None  # verified by nothing: its outcomes are never stored

    case = tmp_path / "cases" / "compile" / "tiny.yaml"  # the loader wants id == file name
    case.parent.mkdir(parents=True)
    case.write_text(TINY_CASE)
    scenario = revision_corpus.load_cases([case])[0]
    run = revision_corpus.run_references([spec], {}, [scenario])[spec.label]
    assert not run.errors, run.errors
    assert "UNCOMMITTED" in json.dumps(run.outcomes["tiny"].record)


def test_a_checkout_runs_under_the_pinned_bun_only() -> None:
    with pytest.raises(ValueError, match=r"checkout: work tree .* pinned bun only"):
        ReferenceSpec.parse("checkout:../lc@node")


# --- upstream's real history ---------------------------------------------------------------------

UPSTREAM = os.environ.get("LETTA_CODE_GIT")


@pytest.mark.integration
@pytest.mark.skipif(not UPSTREAM, reason="set LETTA_CODE_GIT to a local clone of letta-ai/letta-code to run")
def test_upstream_revisions_build_and_equal_their_releases() -> None:
    """In the configured cache (the releases compared with are fetched there, as for any run)."""
    assert UPSTREAM
    repo = Path(UPSTREAM)
    before = snapshot(repo, contents=False)
    old = build_revision(repo, "v0.25.3")
    assert old.version == "0.25.3" and old.pragma and old.compiler_entry.endswith("systemPromptCompilation.ts")
    new = build_revision(repo, "v0.30.28")
    assert new.version == "0.30.28" and not new.pragma and new.release_entry == "src/standalone-entry.ts"
    profile, commit, version = git_reference.profile_of(GitReference(repo, "v0.25.9"))
    assert (profile, version) == ("letta-code@0.25.9", "0.25.9") and commit.startswith("69c20a91c")
    with pytest.raises(UnknownRevisionProfile, match=r"0\.24\.13"):
        git_reference.profile_of(GitReference(repo, "a497fcee4"))
    scenarios = [s for s in revision_corpus.load_cases([Path(__file__).parent.parent / "cases" / "compile"])][:12]
    spec, gits = revision_corpus.git_spec(repo, "v0.25.3")
    runs = revision_corpus.run_references([ReferenceSpec("npm", "0.25.3"), spec], gits, scenarios)
    assert runs[spec.label].keys == runs["0.25.3"].keys and not runs[spec.label].errors
    assert snapshot(repo, contents=False) == before, "something was written inside the clone"


# --- the lifecycle module ------------------------------------------------------------------------

BACKEND = """import { compileLocalSystemPrompt } from "./systemPromptCompilation.ts";

export class LocalBackend {
  static compiler = compileLocalSystemPrompt.name; // initialised with its module, as upstream's class is
  options: { system?: string };
  store = { getCompiledSystemPrompt: () => null, listLocalMessages: () => [] };
  constructor(options: { system?: string }) {
    this.options = options;
  }
  async createAgent(body: { model?: string; system: string }) {
    compileLocalSystemPrompt({ agent: { system: body.system } });
    return { id: "agent-1", model: body.model ?? null };
  }
  async createConversation(_body: unknown) {
    return { id: "conv-1" };
  }
}

export async function reload() {
  return import("./LocalBackend.ts"); // lazily imported, as upstream's is: bun wraps it in __esm
}
"""

PONG = """export class DeterministicPongExecutor {
  async execute() {
    return { text: "pong" };
  }
}
"""


def lifecycle_files() -> dict[str, str | None]:
    return {
        **initial_files(),
        "src/backend/local/LocalBackend.ts": BACKEND,
        "src/backend/dev/HeadlessTurnExecutor.ts": PONG,
    }


def test_lifecycle_module_builds_beside_the_compiler(upstream: Upstream, cache: Path, bun: Path) -> None:
    commit = upstream.commit("backend", lifecycle_files())
    before = snapshot(upstream.path)
    build = build_revision(upstream.path, commit, lifecycle=True, bun=bun)
    assert build.lifecycle is not None
    text = Path(build.lifecycle.path).read_text()
    assert text.startswith("// @bun\n") and "// src/backend/local/LocalBackend.ts" in text
    assert build.lifecycle.packages == {}  # imports nothing at load: nothing installed
    assert not (cache / "git-builds" / "deps").exists()
    assert revision_build.LIFECYCLE_ENTRY not in build.lifecycle.inputs
    assert snapshot(upstream.path) == before
    # compiler-only builds of the same commit come from the cache with the lifecycle module
    assert build_revision(upstream.path, commit, bun=bun) == build


def test_lifecycle_is_built_on_demand_and_its_failure_is_reported(
    upstream: Upstream, cache: Path, tmp_path: Path
) -> None:
    from harness.core.model import LifecycleOpen

    good = upstream.commit("backend", lifecycle_files())
    request = LifecycleOpen(tmp_path / "memory", tmp_path / "storage", "You are a test.", "2026-01-02T03:04:05.678Z")
    runner = git_reference.GitReferenceRunner(GitReference(upstream.path, good), tmp_path / "h", tmp_path)
    runner.start()
    try:
        assert runner.start_error is None and len(runner.process.argv) == 3  # the compiler module only
        opened = runner.lifecycle_open(request)
        assert opened.status == "ok", opened.error
        assert opened.record is not None and opened.record["opened"]["agentId"] == "agent-1"
        assert len(runner.process.argv) == 4 and runner.process.argv[-1].endswith("lifecycle.mjs")
    finally:
        runner.close()

    bad = upstream.commit("no backend", {"src/backend/local/LocalBackend.ts": None})
    runner = git_reference.GitReferenceRunner(GitReference(upstream.path, bad), tmp_path / "h", tmp_path)
    runner.start()
    try:
        outcome = runner.lifecycle_open(request)
        assert outcome.status == "error" and "no LocalBackend" in (outcome.error or "")
        assert runner.describe()["lifecycle_error"].startswith("no LocalBackend")
    finally:
        runner.close()


def test_change_positions_finds_every_change_of_every_case() -> None:
    outputs = {"a": "xxxyyyyzzz", "b": "pppppppqqq", "c": "ssssssssss", "d": "mmnnnnnnnm"}
    asked: set[tuple[int, str]] = set()

    def key(index: int, case: str) -> str:
        asked.add((index, case))
        return outputs[case][index]

    found = history.change_positions(10, list(outputs), key)
    assert found == {3: ["a"], 7: ["a", "b"]}  # d changes and changes back: not seen, as documented
    assert len({i for i, _ in asked}) < 10


def test_the_commands_register_on_a_parser() -> None:
    import argparse

    from harness.cli import history as history_cli

    parser = argparse.ArgumentParser()
    history_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["history", "--git", "/clone", "--from", "a497fcee4", "--out", "out"])
    assert (args.func, args.start, args.end) == (history_cli.cmd_history, "a497fcee4", "HEAD")
    assert parser.parse_args(["upstream-head", "--git", "/clone"]).func is history_cli.cmd_head
    assert issubclass(UnknownRevisionProfile, ValueError)  # cli.common.check_profile makes it a UsageError: exit 2
