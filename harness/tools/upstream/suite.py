"""`conformance upstream-tests`: upstream's own tests of the compiler, the skills block, the frontmatter parser
and LocalBackend's prompt cache, run by upstream's `bun test` against the implementation under test
(docs/upstream-tests.md).

For each revision (`--git PATH[@REV]`):
1. **Prepare** (`prepare`): the revision's source (revision_source.SourceTree: read with git, never written
   to the clone; plus bunfig.toml's test preloads) in a tree of our cache; the test files selected
   (upstream_select.select_tests); the packages those files import at load (a `bun build` of them with
   packages external), installed at the versions the revision's bun.lock pins, with `--ignore-scripts`
   (revision_build's install, cached by packages, versions and lockfile).
2. **Control run**: every selected file under `bun test` with upstream's own compiler module.
3. **Shim run**: the compiler module replaced by the shim (upstream_select.shim_module), each forwarded call
   answered by the implementation through the bridge (upstream_bridge), every file again.
4. **Verdicts** (`judge_file`, the one rule): pass, fail, not-applicable or broken for every test, never a
   silent skip.

A revision's tree is held under a lock for the whole of it (the shim is written into it), and the shim is
undone afterwards, or at the next run if this one was killed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.acquire.revision_build import LOADERS, build_lock, builds_root, install_locked_packages, repo_key
from harness.acquire.revision_source import (
    BuildError,
    SourceTree,
    compiler_entry,
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
from harness.tools.upstream.select import PRELOAD, Shim, bunfig_preloads, select_tests, shim_module
from harness.tools.upstream.verdict import judge_file

ANALYSIS_FORMAT = 1  # bump when what `_analysed` records changes
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
    impl_env: dict[str, str] = field(default_factory=dict)  # --impl-env: passed to the implementation


@dataclass
class Prepared:
    tree: SourceTree
    selected: list[SelectedFile]
    shim: Shim | None
    packages: dict[str, str]
    notes: list[str]
    extras: set[str]  # files written beside the SourceTree's (bunfig.toml's preloads)


def trees_root() -> Path:
    return builds_root().parent / "upstream-tests"


def _restore(root: Path) -> None:
    """Undo a shim a killed run left in the tree."""
    marker = root / SHIM_MARKER
    if not marker.exists():
        return
    with contextlib.suppress(OSError, ValueError, KeyError):
        placed = json.loads(marker.read_text(encoding="utf-8"))
        moved = root / placed["upstream"]
        if moved.exists():
            moved.replace(root / placed["compiler"])
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


def prepare(tree: SourceTree, commit: str, bun: Path) -> Prepared:
    """The revision's tree, its selected tests, the shim and the installed packages (held under the tree's lock)."""
    _restore(tree.root)
    tree.checkout(commit)
    notes = [f"the repository lacks the blobs of {path}" for path in tree.missing[:10]]
    extras = _write_extras(tree, commit, bunfig_preloads(tree.read("bunfig.toml")))
    sweep(tree, extras)
    compiler = compiler_entry(tree.entries)
    shim = shim_module(compiler, (tree.read(compiler) or b"").decode("utf-8")) if compiler else None
    selected, packages, problems = _analysed(tree, commit, extras, bun)
    versions, install_notes = install(bun, tree, packages)
    return Prepared(tree, selected, shim, versions, notes + problems + install_notes, extras)


def _analysed(
    tree: SourceTree, commit: str, extras: set[str], bun: Path
) -> tuple[list[SelectedFile], list[str], list[str]]:
    """The selected test files and the packages they import at load: worked out once per commit (and bun), then
    read from `upstream-tests/commits/<commit>.json`."""
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
    """What the selection rule and the shim are: a change of either analyses every commit again."""
    return hashlib.sha256(Path(upstream_select.__file__).read_bytes()).hexdigest()[:16]


@contextlib.contextmanager
def shimmed(root: Path, shim: Shim) -> Iterator[None]:
    """The shim in place of the compiler module, the compiler beside it; undone afterwards."""
    original = (root / shim.compiler).read_bytes()
    (root / SHIM_MARKER).write_text(json.dumps({"compiler": shim.compiler, "upstream": shim.upstream}))
    (root / shim.upstream).write_bytes(original)
    (root / shim.compiler).write_text(shim.text, encoding="utf-8")
    try:
        yield
    finally:
        (root / shim.compiler).write_bytes(original)
        (root / shim.upstream).unlink(missing_ok=True)
        (root / SHIM_MARKER).unlink(missing_ok=True)


def run_files(
    bun: Path, prepared: Prepared, options: Options, progress: Progress, what: str, bridge: Bridge | None = None
) -> list[FileRun]:
    runs = []
    for number, selected in enumerate(prepared.selected, 1):
        progress(f"  {what} [{number}/{len(prepared.selected)}] {selected.path}")
        run = run_file(
            bun,
            prepared.tree.root,
            selected.path,
            timeout=options.file_timeout,
            preload=PRELOAD if bridge else None,
            extra_env=bridge.env() if bridge else None,
            test_timeout_ms=options.test_timeout_ms,
        )
        sweep(prepared.tree, prepared.extras | ({prepared.shim.upstream} if bridge and prepared.shim else set()))
        runs.append(run)
    return runs


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
        prepared = prepare(tree, commit, bun)
        prepared_at = time.perf_counter()
        result.files, result.packages, result.notes = prepared.selected, prepared.packages, prepared.notes
        if prepared.shim is None:
            result.error = "no compiler module at this revision: nothing the shim could replace"
            result.timing = {"prepare": round(prepared_at - started, 3), "total": round(prepared_at - started, 3)}
            return result
        result.forwarded, result.kept = prepared.shim.forwarded, prepared.shim.kept
        control = run_files(bun, prepared, options, progress, "control")
        control_at = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="conformance-upstream-impl-") as home:
            context = ImplContext({}, Path(home), None, options.timeout, options.impl_env)
            bridge = Bridge(impl, profile, context)
            try:
                bridge.start()
                with shimmed(tree.root, prepared.shim):
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
