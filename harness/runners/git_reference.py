"""`git:PATH@REV` and `checkout:PATH` references: an upstream revision, or a checkout's work tree with
its uncommitted edits, built from source (harness.acquire.revision_build), run by the same driver as a
release.

- `git:PATH` is a local clone of letta-code and `REV` any commit-ish (default HEAD):
  `git:~/src/letta-code@v0.25.9`, `git:../letta-code@91e3790f6`, `git:/work/letta-code`.
- `checkout:PATH` is a clone's work tree as it is on disk (tracked files and untracked ones git does
  not ignore), built by the same builder, cached by a digest of its files: an edit is built again.
  Nothing verifies it, so the result store never memoizes its outcomes.
- The compiler module is built when the reference starts; the lifecycle module (LocalBackend and
  DeterministicPongExecutor, with its load-time packages installed) only when the run has
  lifecycle cases. Both are cached by commit, so `-j` workers and later runs reuse them.
- **Profile rule.** A revision (a work tree) is compared with the profile of the version in its
  `package.json` (`letta_profiles.profile_name_for_release`). A version no profile maps
  (an unreleased version, such as 0.24.13 at a497fcee4 or the snapshot's 0.30.29) is an error
  naming the version and the nearest release tag; it is never compared with the default
  profile. The override is `--profile` (or, per reference, `git:PATH@REV#letta-code@X`), recorded
  in the report as the profile of that reference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.acquire.manifest import DRIVER_PATH
from harness.acquire.releases import ensure_bun
from harness.acquire.revision_build import RevisionBuild, build_revision, build_worktree
from harness.acquire.revision_source import BuildError, git, resolve_commit
from harness.core.model import LifecycleOpen, Outcome
from harness.core.reference import ReferenceSpec
from harness.runners.bun_reference import BunReferenceRunner
from letta_profiles import profile_name_for_release, resolve_profile_name


class UnknownRevisionProfile(ValueError):
    """A revision whose version maps to no profile, and no override was given (a usage error: exit 2)."""


@dataclass(frozen=True)
class GitReference:
    repo: Path
    rev: str = "HEAD"
    profile: str | None = None  # the per-reference override (`#letta-code@X`)
    worktree: bool = False  # `checkout:PATH`: the work tree with its uncommitted edits (`rev` unused)

    @property
    def label(self) -> str:
        return f"checkout:{self.repo}" if self.worktree else f"git:{self.repo}@{self.rev}"

    @classmethod
    def parse(cls, text: str) -> GitReference:
        """`git:PATH`, `git:PATH@REV`, `git:PATH@REV#PROFILE` (the REV is what follows the last `@`), or
        `checkout:PATH` (a work tree: no REV, no PROFILE)."""
        if text.startswith("checkout:"):
            path = text.removeprefix("checkout:")
            if not path:
                raise ValueError(f"--reference {text!r}: use checkout:PATH (a local clone's work tree)")
            return cls(Path(path).expanduser(), worktree=True)
        body = text.removeprefix("git:")
        body, _, profile = body.partition("#")
        path, at, rev = body.rpartition("@")
        if not at:
            path, rev = body, "HEAD"
        if not path or not rev:
            raise ValueError(f"--reference {text!r}: use git:PATH or git:PATH@REV (a local clone, any commit-ish)")
        return cls(Path(path).expanduser(), rev, profile or None)

    @classmethod
    def of_spec(cls, spec: ReferenceSpec) -> GitReference:
        """The reference a `git` or `checkout` spec names."""
        return cls.parse(f"{spec.kind}:{spec.value}")

    def spec(self) -> ReferenceSpec:
        """As a ReferenceSpec (`git`, `PATH@REV`; `checkout`, `PATH`), for the run's bookkeeping."""
        if self.worktree:
            return ReferenceSpec("checkout", str(self.repo))
        return ReferenceSpec("git", f"{self.repo}@{self.rev}")

    def build(self, lifecycle: bool = False) -> RevisionBuild:
        """Its modules, from the one builder (harness.acquire.revision_build), cached."""
        if self.worktree:
            return build_worktree(self.repo, lifecycle=lifecycle, bun=ensure_bun())
        return build_revision(self.repo, self.rev, lifecycle=lifecycle, bun=ensure_bun())


def nearest_release(repo: Path, commit: str) -> tuple[str | None, int]:
    """The newest `v*` tag reachable from `commit` and how many commits lie after it (0: the tag's commit)."""
    try:
        described = git(repo, "describe", "--tags", "--match", "v[0-9]*", "--long", commit).decode().strip()
    except BuildError:
        return None, 0
    tag, distance, _ = described.rsplit("-", 2)
    return tag.removeprefix("v"), int(distance)


def revision_profile(version: str | None, override: str | None = None, *, where: str = "") -> str:
    """The name of the profile a revision is compared with: the override, else the profile mapping its version."""
    if override:
        return resolve_profile_name(override)
    if version is None:
        raise UnknownRevisionProfile(
            f"{where or 'the revision'} has no version in package.json; name a profile with --profile letta-code@X"
        )
    try:
        return profile_name_for_release(version)
    except KeyError:
        raise UnknownRevisionProfile(
            f"{where or 'the revision'} is letta-code {version}, a version no profile maps (unreleased, or not "
            "in letta_profiles); it is not compared with the default profile: name one with "
            "--profile letta-code@X (or git:PATH@REV#letta-code@X)"
        ) from None


def revision_version(repo: Path, commit: str) -> str | None:
    """The version in a commit's package.json (read with git; nothing is built)."""
    try:
        return json.loads(git(repo, "show", f"{commit}:package.json")).get("version")
    except (BuildError, ValueError):
        return None


def worktree_version(repo: Path) -> str | None:
    """The version in a work tree's package.json, as the file system has it."""
    try:
        return json.loads((repo / "package.json").read_bytes()).get("version")
    except (OSError, ValueError, AttributeError):
        return None


def profile_of(reference: GitReference, override: str | None = None) -> tuple[str, str, str | None]:
    """The profile name a git reference is judged with (the rule above), its commit (a work tree: its
    HEAD's) and its version. Nothing is built: a revision that does not build is an error of its cases,
    not of the run. A path that is no git repository raises BuildError."""
    repo = reference.repo.expanduser().resolve()
    commit = resolve_commit(repo, reference.rev)
    version = worktree_version(repo) if reference.worktree else revision_version(repo, commit)
    tag, distance = nearest_release(repo, commit)
    near = f"; nearest release tag v{tag}" + (f" + {distance} commits" if distance else "") if tag else ""
    where = f"{reference.label} ({commit[:12]}{near})"
    return revision_profile(version, override or reference.profile, where=where), commit, version


class GitReferenceRunner(BunReferenceRunner):
    """A revision's (or a work tree's) built modules run by reference/driver.mjs under the pinned bun.

    A failed build is a start error carrying the build's own message, so every case of this
    reference is an error with it. The lifecycle module is built when `lifecycle` is True at start,
    or (`lifecycle` None, the default) at the first lifecycle request, and the driver is restarted
    with it; when only it fails, compile cases still run and lifecycle requests answer with the
    build's message. Builds are cached by commit (a work tree: by its files' digest), so every `-j` slot
    after the first reuses them.
    """

    def __init__(
        self,
        reference: GitReference,
        home: Path,
        ceiling: Path | None,
        timeout: float = 60.0,
        lifecycle: bool | None = None,
    ) -> None:
        super().__init__(reference.spec(), home, ceiling, timeout)
        self.name = reference.label
        self.reference = reference
        self.lifecycle = lifecycle
        self.build: RevisionBuild | None = None
        self.lifecycle_error: str | None = None
        self._lifecycle_loaded = False

    def start(self) -> None:
        try:
            self.build = self.reference.build()
        except (BuildError, OSError) as error:
            self.start_error = str(error)
            return
        self.bundle = Path(self.build.compiler.path)
        self.version = self.build.version
        if self.lifecycle:
            self._build_lifecycle()
        self._start_driver()

    def _build_lifecycle(self) -> None:
        try:
            full = self.reference.build(lifecycle=True)
        except (BuildError, OSError) as error:
            self.lifecycle_error = str(error)
            return
        self.build = full
        self._lifecycle_loaded = True

    def _start_driver(self) -> None:
        assert self.build is not None
        lifecycle = [self.build.lifecycle.path] if self._lifecycle_loaded and self.build.lifecycle else []
        self.process.argv = [
            str(ensure_bun()),
            *self.interpreter_flags(),
            str(DRIVER_PATH),
            self.build.compiler.path,
            *lifecycle,
        ]
        self.process.env = self.reference_env()
        super(BunReferenceRunner, self).start()

    def interpreter_flags(self) -> list[str]:
        """A revision's modules run without `--no-install` (as they always have)."""
        return []

    def _lifecycle_unavailable(self) -> Outcome | None:
        if self.start_error:
            return None  # the usual start error answers
        if not self._lifecycle_loaded and self.lifecycle_error is None:
            self._build_lifecycle()
            if self._lifecycle_loaded:
                self.process.stop()
                self._start_driver()
        if self.lifecycle_error:
            return Outcome("error", error=f"lifecycle module unavailable: {self.lifecycle_error}")
        return None

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        return self._lifecycle_unavailable() or super().lifecycle_open(request)

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        return self._lifecycle_unavailable() or super().lifecycle_step(step)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        if self.build is not None:
            info["git"] = {
                "repo": str(self.reference.repo),
                "rev": None if self.reference.worktree else self.reference.rev,
                "worktree": self.reference.worktree,
                "commit": self.build.commit,
                "compiler_sha256": self.build.compiler.sha256,
                "pragma": self.build.pragma,
                "release_entry": self.build.release_entry,
                "lifecycle_sha256": self.build.lifecycle.sha256 if self.build.lifecycle else None,
            }
        if self.lifecycle_error:
            info["lifecycle_error"] = self.lifecycle_error
        return info
