"""A real letta-code build run by bun through reference/driver.mjs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..gitenv import isolated_env, recorded_env
from ..releases import DRIVER_PATH, ReferenceSpec, ReferenceUnavailable, bundle_version, ensure_bun, resolve_bundle
from .jsonl_process import JsonLinesRunner


class BunReferenceRunner(JsonLinesRunner):
    """One warm bun process per reference, restarted after a crash, a timeout or pollution."""

    def __init__(self, spec: ReferenceSpec, home: Path, ceiling: Path | None, timeout: float = 60.0) -> None:
        super().__init__(f"letta-code@{spec.value}" if spec.kind == "npm" else spec.label, [], None, timeout)
        self.spec = spec
        self.home, self.ceiling = home, ceiling
        self.bundle: Path | None = None
        self.version: str | None = spec.value if spec.kind == "npm" else None

    def start(self) -> None:
        try:
            bun = ensure_bun()
            self.bundle = resolve_bundle(self.spec, bun)
        except (ReferenceUnavailable, OSError) as error:
            self.start_error = str(error)
            return
        self.version = bundle_version(self.bundle) or self.version
        env = isolated_env(self.home, self.ceiling)
        self.process.argv = [str(bun), str(DRIVER_PATH), str(self.bundle)]
        self.process.env = env
        super().start()

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update({"reference": self.spec.label, "version": self.version, "bundle": str(self.bundle)})
        if self.process.env:
            info["env"] = recorded_env(self.process.env)
        if self.start_error:
            info["start_error"] = self.start_error
        return info
