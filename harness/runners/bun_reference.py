"""A real letta-code build run by bun through reference/driver.mjs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.acquire.manifest import DRIVER_PATH
from harness.acquire.releases import ReferenceUnavailable, bundle_version, ensure_bun, resolve_bundle
from harness.core.reference import ReferenceSpec
from harness.repo.gitenv import isolated_env, recorded_env
from harness.runners.jsonl_process import JsonLinesRunner


class BunReferenceRunner(JsonLinesRunner):
    """One warm bun process per reference, restarted after a crash, a timeout or pollution.

    A spec with a locale runs the process with LANG/LC_ALL set to it (the git environment
    stays otherwise isolated); subclasses choose another interpreter (harness.runners.node_reference).
    """

    def __init__(self, spec: ReferenceSpec, home: Path, ceiling: Path | None, timeout: float = 60.0) -> None:
        super().__init__(spec.runner_name, [], None, timeout)
        self.spec = spec
        self.home, self.ceiling = home, ceiling
        self.bundle: Path | None = None
        self.version: str | None = spec.value if spec.is_release else None

    def interpreter(self) -> Path:
        return ensure_bun()

    def interpreter_flags(self) -> list[str]:
        """What the interpreter is given before the driver (part of the result store's key)."""
        # bun would fetch a package the bundle imports but nothing provides (unpinned, unverified): refuse
        return ["--no-install"] if self.spec.runtime == "bun" else []

    def reference_env(self) -> dict[str, str]:
        """The process's environment: the isolated one, with LANG/LC_ALL set to the spec's locale if it has one."""
        env = isolated_env(self.home, self.ceiling)
        if self.spec.locale:
            env["LANG"] = env["LC_ALL"] = self.spec.locale
        return env

    def start(self) -> None:
        try:
            interpreter = self.interpreter()
            self.bundle = resolve_bundle(self.spec)
        except (ReferenceUnavailable, OSError) as error:
            self.start_error = str(error)
            return
        self.version = bundle_version(self.bundle) or self.version
        self.process.argv = [str(interpreter), *self.interpreter_flags(), str(DRIVER_PATH), str(self.bundle)]
        self.process.env = self.reference_env()
        # upstream writes relative paths (0.25.x: `.letta/.lettaignore`); they land in the private home
        self.process.cwd = self.home
        super().start()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(
            {
                "reference": self.spec.label,
                "version": self.version,
                "bundle": str(self.bundle),
                "runtime": self.spec.runtime,
                "locale": self.spec.locale,
            }
        )
        if self.process.env:
            info["env"] = recorded_env(self.process.env)
        if self.start_error:
            info["start_error"] = self.start_error
        return info
