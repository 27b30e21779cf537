"""`conformance upstream-tests`: upstream's own tests, run by upstream's `bun test` against the implementation
under test with one upstream module at a time swapped for a shim that forwards to it (docs/upstream-tests.md).
What can be swapped is the table of swap targets (upstream_select.TARGETS), one row per module:
- `compiler`: the compiler module (`compile`, `skills_block`; with the frontmatter parser's and LocalBackend's
  prompt-cache tests);
- `pre-commit-hook`: PRE_COMMIT_HOOK_SCRIPT, whose shim is a hook git runs (hook_client.py asks `validate` about
  a copy of the repository);
- `memory-tool`: the memory tool's `memory(args)` (`memory_write`);
- `post-turn-sync`: `syncPendingMemoryCommitsAfterTurn` (`memory_reminder`).

For each revision (`--git PATH[@REV]`):
1. **Prepare** (`prepare`): the revision's source (revision_source.SourceTree: read with git, never written
   to the clone; plus bunfig.toml's test preloads) in a tree of our cache; each target's module at the revision
   (`SwapTarget.module_of`) and its shim; the test files selected (upstream_select.select_tests, each with the
   targets that selected it; `--target` narrows the table); the packages those files import at load (a
   `bun build` of them with packages external), installed at the versions the revision's bun.lock pins, with
   `--ignore-scripts` (revision_build's install, cached by packages, versions and lockfile).
2. **Control run**: every selected file under `bun test` with upstream's own modules.
3. **Shim run**: every file again, with the shims of the targets that selected it in place of their modules
   (placed before the file runs, undone after it: a file never runs with a shim that did not select it), each
   forwarded call answered by the implementation: through the bridge (upstream_bridge) for calls bun makes,
   through hook_client.py for the hook git runs.
4. **Verdicts** (`judge_file`, the one rule): pass, fail, not-applicable or broken for every test, never a
   silent skip.

A revision's tree is held under a lock for the whole of it (the shims are written into it), and each shim is
undone after its file, or at the next run if this one was killed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.acquire.revision_build import LOADERS, build_lock, builds_root, install_locked_packages, repo_key
from harness.acquire.revision_source import (
    BuildError,
    SourceTree,
    list_tree,
    load_time_packages,
    locked_versions,
    read_blobs,
)
from harness.report.upstream_records import FileRun, Outcome, RevisionResult, SelectedFile, TestVerdict, UpstreamRun
from harness.runners.git_reference import GitReference, profile_of
from harness.runners.implementations import ImplContext, ImplSpec
from harness.tools.upstream import select as upstream_select
from harness.tools.upstream.bridge import Bridge
from harness.tools.upstream.bun_file import run_file
from harness.tools.upstream.select import (
    HOOK_COMMAND,
    PRELOAD,
    TARGETS,
    Shim,
    SwapTarget,
    bunfig_preloads,
    hook_command,
    placed_text,
    select_tests,
)
from harness.tools.upstream.verdict import judge_file

ANALYSIS_FORMAT = 2  # bump when what `_analysed` records changes
SHIM_MARKER = ".conformance-upstream-tests-shim.json"  # in a tree while the shim is in place
EXTRAS_STATE = ".conformance-upstream-tests-extras.json"  # files written beside SourceTree's (bunfig preloads)
KEEP = {".conformance-tree.json", SHIM_MARKER, EXTRAS_STATE, "node_modules"}

Progress = Callable[[str], None]


@dataclass
class Options:
    timeout: float = 60.0  # seconds the implementation may take per forwarded call
    file_timeout: float = 600.0  # seconds one `bun test FILE` may take
    test_timeout_ms: int | None = None  # bun's per-test timeout (default: bun's own, as upstream runs)
    profile: str | None = None  # the profile override (else the revision's version decides)
    targets: tuple[str, ...] = ()  # --target: the swap targets whose files run (empty: every target)
    impl_env: dict[str, str] = field(default_factory=dict)  # --impl-env: passed to the implementation


@dataclass
class Prepared:
    tree: SourceTree
    selected: list[SelectedFile]
    shims: dict[str, Shim]  # by target name: the targets whose module this revision has
    packages: dict[str, str]
    notes: list[str]
    extras: set[str]  # files written beside the SourceTree's (bunfig.toml's preloads)


def trees_root() -> Path:
    return builds_root().parent / "upstream-tests"


def _restore(root: Path) -> None:
    """Undo the shims a killed run left in the tree."""
    marker = root / SHIM_MARKER
    if not marker.exists():
        return
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        placed = json.loads(marker.read_text(encoding="utf-8"))
        for shim in placed.get("shims", [placed]):  # (a marker of one shim: before targets)
            moved = root / shim["upstream"]
            if moved.exists():
                moved.replace(root / shim["compiler"])
    marker.unlink(missing_ok=True)


def _write_extras(tree: SourceTree, commit: str, paths: list[str]) -> set[str]:
    """The files outside SourceTree's paths that upstream's tests need (bunfig.toml's preloads)."""
    state = tree.root / EXTRAS_STATE
    with contextlib.suppress(OSError, ValueError):
        for old in json.loads(state.read_text(encoding="utf-8")):
            (tree.root / old).unlink(missing_ok=True)
    wanted = {p: e for p, e in list_tree(tree.repo, commit, tuple(paths)).items()} if paths else {}
    contents = read_blobs(tree.repo, sorted({e.blob for e in wanted.values()}))
    written = []
    for path, entry in wanted.items():
        data = contents.get(entry.blob)
        if data is None or path in tree.entries:
            continue
        target = tree.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(path)
    state.write_text(json.dumps(sorted(written)), encoding="utf-8")
    return set(written)


def sweep(tree: SourceTree, extras: set[str]) -> None:
    """Remove what upstream's tests wrote into the tree (they run from its root)."""
    known = set(tree.entries) | extras
    for directory, dirs, files in os.walk(tree.root):
        relative = os.path.relpath(directory, tree.root)
        relative = "" if relative == "." else relative + "/"
        if not relative:
            dirs[:] = [d for d in dirs if d not in KEEP]
        for name in files:
            path = relative + name
            if path not in known and path not in KEEP:
                (tree.root / path).unlink(missing_ok=True)


def builtin_modules(bun: Path) -> set[str]:
    """The pinned bun's own modules (node's builtins and bun's), which nothing installs."""
    done = subprocess.run(
        [str(bun), "-e", "console.log(JSON.stringify(require('module').builtinModules))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        return set(json.loads(done.stdout))
    except ValueError:
        return set()


def packages_at_load(bun: Path, root: Path, files: list[str]) -> tuple[list[str], list[str]]:
    """The packages the test files import at load (a build of each with packages external), and the files
    bun could not build (their messages)."""
    builtins = builtin_modules(bun)
    names: set[str] = set()
    problems = []
    with tempfile.TemporaryDirectory(prefix="conformance-upstream-build-") as out:
        for index, file in enumerate(files):
            outfile = Path(out) / f"{index}.js"
            command = [
                str(bun),
                "build",
                f"./{file}",
                "--target",
                "bun",
                "--packages",
                "external",
                *(f"--loader={loader}" for loader in LOADERS),
                "--outfile",
                str(outfile),
            ]
            done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False, timeout=600)
            if done.returncode != 0 or not outfile.exists():
                problems.append(f"{file}: bun build failed: {(done.stderr or done.stdout).strip()[-800:]}")
                continue
            for name in load_time_packages(outfile.read_text(encoding="utf-8")):
                if not name.startswith("bun:") and name != "bun" and name not in builtins:
                    names.add(name)
    return sorted(names), problems


def install(bun: Path, tree: SourceTree, packages: list[str]) -> tuple[dict[str, str], list[str]]:
    """Install `packages` at the revision's locked versions into the tree's node_modules (a link into the shared
    deps cache); the versions installed and what could not be."""
    notes, versions = [], {}
    lock = tree.read("bun.lock")
    for name in packages:
        try:
            versions.update(locked_versions(lock, [name]))
        except BuildError as error:
            notes.append(f"{name} is not installed: {error}")
    link = tree.root / "node_modules"
    if link.is_symlink() or link.exists():
        link.unlink()
    if versions:
        try:
            link.symlink_to(install_locked_packages(bun, tree, versions))
        except BuildError as error:
            notes.append(str(error))
            versions = {}
    return versions, notes


def targets_of(names: tuple[str, ...]) -> tuple[SwapTarget, ...]:
    """The swap targets `--target` names, in the table's order (every target when none is named)."""
    return tuple(t for t in TARGETS if not names or t.name in names)


def shims_of(tree: SourceTree, targets: tuple[SwapTarget, ...]) -> dict[str, Shim]:
    """Each target's shim at the tree's revision (a target whose module the revision lacks has none)."""

    def read(path: str) -> str | None:
        data = tree.read(path) if path in tree.entries else None
        return data.decode("utf-8", "replace") if data is not None else None

    shims: dict[str, Shim] = {}
    for target in targets:
        module = target.module_of(read)
        taken = next((name for name, shim in shims.items() if shim.compiler == module), None)
        if module is not None and taken is None:  # (one shim a module: the earlier target's, in the table's order)
            shims[target.name] = target.build(module, read(module) or "")
    return shims


def prepare(tree: SourceTree, commit: str, bun: Path, targets: tuple[SwapTarget, ...] = TARGETS) -> Prepared:
    """The revision's tree, its selected tests, the shims and the installed packages (held under the tree's
    lock)."""
    _restore(tree.root)
    tree.checkout(commit)
    notes = [f"the repository lacks the blobs of {path}" for path in tree.missing[:10]]
    extras = _write_extras(tree, commit, bunfig_preloads(tree.read("bunfig.toml")))
    sweep(tree, extras)
    shims = shims_of(tree, targets)
    selected, packages, problems = _analysed(tree, commit, extras, bun)
    names = {t.name for t in targets}
    selected = [f for f in selected if names & set(f.targets)]
    for file in selected:
        missing = [t for t in file.targets if t in names and t not in shims]
        if missing:
            notes.append(f"{file.path}: no module of {', '.join(missing)} defines a forwarded export: not shimmed")
    versions, install_notes = install(bun, tree, packages)
    return Prepared(tree, selected, shims, versions, notes + problems + install_notes, extras)


def _analysed(
    tree: SourceTree, commit: str, extras: set[str], bun: Path
) -> tuple[list[SelectedFile], list[str], list[str]]:
    """The selected test files (of every target) and the packages they import at load: worked out once per commit
    (and bun), then read from `upstream-tests/commits/<commit>.json`."""
    key = {"format": ANALYSIS_FORMAT, "commit": commit, "bun": str(bun), "shim": _shim_digest()}
    cached = trees_root() / "commits" / f"{commit}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        data = json.loads(cached.read_text(encoding="utf-8"))
        if data["key"] == key:
            return [SelectedFile(**f) for f in data["selected"]], data["packages"], data["problems"]
    selected = select_tests(tree.root, set(tree.entries) | extras)
    packages, problems = packages_at_load(bun, tree.root, [s.path for s in selected])
    cached.parent.mkdir(parents=True, exist_ok=True)
    record = {"key": key, "selected": [asdict(f) for f in selected], "packages": packages, "problems": problems}
    cached.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return selected, packages, problems


def _shim_digest() -> str:
    """What the selection rule and the target table are: a change analyses every commit again."""
    return hashlib.sha256(Path(upstream_select.__file__).read_bytes()).hexdigest()[:16]


@contextlib.contextmanager
def shimmed(root: Path, shims: list[Shim], values: dict[str, str] | None = None) -> Iterator[None]:
    """Each shim in place of its module, the module beside it (`values`: what the shim run fills in); undone
    afterwards, every one of them."""
    originals = {shim.compiler: (root / shim.compiler).read_bytes() for shim in shims}
    placed = [{"compiler": shim.compiler, "upstream": shim.upstream} for shim in shims]
    (root / SHIM_MARKER).write_text(json.dumps({"shims": placed}))
    try:
        for shim in shims:
            (root / shim.upstream).write_bytes(originals[shim.compiler])
            (root / shim.compiler).write_text(placed_text(shim, values or {}), encoding="utf-8")
        yield
    finally:
        for shim in shims:
            (root / shim.compiler).write_bytes(originals[shim.compiler])
            (root / shim.upstream).unlink(missing_ok=True)
        (root / SHIM_MARKER).unlink(missing_ok=True)


def shim_values(bridge: Bridge) -> dict[str, str]:
    """What the shims leave to the shim run: the hook's command (the harness's Python, hook_client.py and the
    bridge's configuration, as absolute paths)."""
    return {HOOK_COMMAND: hook_command(sys.executable, bridge.hook_config())}


def run_files(
    bun: Path, prepared: Prepared, options: Options, progress: Progress, what: str, bridge: Bridge | None = None
) -> list[FileRun]:
    """Every selected file under `bun test`: as upstream's source is (the control run), or with the shims of the
    file's targets in place (with `bridge`: the shim run)."""
    runs = []
    values = shim_values(bridge) if bridge else {}
    for number, selected in enumerate(prepared.selected, 1):
        progress(f"  {what} [{number}/{len(prepared.selected)}] {selected.path}")
        shims = [prepared.shims[t] for t in selected.targets if t in prepared.shims] if bridge else []
        with shimmed(prepared.tree.root, shims, values) if shims else contextlib.nullcontext():
            run = run_file(
                bun,
                prepared.tree.root,
                selected.path,
                timeout=options.file_timeout,
                preload=PRELOAD if bridge else None,
                extra_env=bridge.env() if bridge else None,
                test_timeout_ms=options.test_timeout_ms,
            )
            sweep(prepared.tree, prepared.extras | {shim.upstream for shim in shims})
        runs.append(run)
    return runs


def swaps_of(prepared: Prepared) -> list[dict[str, object]]:
    """Per target with a module at the revision: the module, what its shim forwards and keeps, its files."""
    return [
        {
            "target": name,
            "module": shim.compiler,
            "forwarded": shim.forwarded,
            "kept": shim.kept,
            "files": [f.path for f in prepared.selected if name in f.targets],
        }
        for name, shim in prepared.shims.items()
    ]


def _judge(prepared: Prepared, control: list[FileRun], shim: list[FileRun]) -> list[TestVerdict]:
    verdicts = []
    for selected, control_run, shim_run in zip(prepared.selected, control, shim, strict=True):
        verdicts.extend(judge_file(selected, control_run, shim_run))
    return verdicts


def run_revision(
    reference: GitReference, impl: ImplSpec, options: Options, bun: Path, progress: Progress = lambda _: None
) -> RevisionResult:
    """One revision under one implementation: prepare, the control run, the shim run, the verdicts."""
    started = time.perf_counter()
    repo = reference.repo.expanduser().resolve()
    profile, commit, version = profile_of(reference, options.profile)
    result = RevisionResult(str(repo), reference.rev, commit, version, profile, impl.label)
    with build_lock(f"upstream-tests-{repo_key(repo)}"):
        tree = SourceTree(repo, trees_root() / "trees" / repo_key(repo))
        progress(f"{reference.label} ({commit[:12]}, letta-code {version}, profile {profile}): preparing")
        targets = targets_of(options.targets)
        prepared = prepare(tree, commit, bun, targets)
        prepared_at = time.perf_counter()
        result.files, result.packages, result.notes = prepared.selected, prepared.packages, prepared.notes
        if not prepared.shims:
            names = ", ".join(t.name for t in targets)
            result.error = f"no module of any swap target ({names}) at this revision: nothing a shim could replace"
            result.timing = {"prepare": round(prepared_at - started, 3), "total": round(prepared_at - started, 3)}
            return result
        result.swaps = swaps_of(prepared)
        result.forwarded = [name for shim in prepared.shims.values() for name in shim.forwarded]
        result.kept = [name for shim in prepared.shims.values() for name in shim.kept]
        control = run_files(bun, prepared, options, progress, "control")
        control_at = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="conformance-upstream-impl-") as home:
            context = ImplContext({}, Path(home), None, options.timeout, options.impl_env)
            bridge = Bridge(impl, profile, context)
            try:
                bridge.start()
                shim = run_files(bun, prepared, options, progress, "shim", bridge)
            finally:
                bridge.close()
        result.implementation_info = bridge.describe()
        done = time.perf_counter()
    result.control_runs, result.shim_runs = control, shim
    result.control_passed = sum(t.outcome == Outcome.PASSED for run in control for t in run.tests)
    result.tests = _judge(prepared, control, shim)
    result.timing = {
        "prepare": round(prepared_at - started, 3),
        "control": round(control_at - prepared_at, 3),
        "shim": round(done - control_at, 3),
        "total": round(done - started, 3),
    }
    return result


def run_upstream_tests(
    references: list[GitReference], impl: ImplSpec, options: Options, bun: Path, progress: Progress = lambda _: None
) -> UpstreamRun:
    """Every revision under `impl`, one after the other."""
    started = time.perf_counter()
    run = UpstreamRun(impl.label)
    for reference in references:
        run.revisions.append(run_revision(reference, impl, options, bun, progress))
    run.seconds = round(time.perf_counter() - started, 3)
    return run
