"""The Letta server (PyPI `letta` <= 0.16.8) as a reference: `--reference letta-server:0.16.8`.

The other product that renders the same git memory format (docs/products.md). Its driver,
reference/letta_server/driver.py, speaks reference/driver.mjs's JSON-lines protocol (`hello`,
`compile`; lifecycle ops are refused), so this is a plain JsonLinesRunner run by the python of a
pinned, hash-checked venv in the cache (reference/letta_server/install.py, `ensure_server_env`).
If that venv cannot be installed, that is the reference's start error: every case is an error.

It is compared with the Python port under COMPARED_WITH (letta-code's rules, byte-identical to
letta-code 0.32.14-0.32.17 on the corpus), on the product view's fields only
(harness.verdict.view.PRODUCT); each difference is a recorded `product-difference` divergence.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.repo.gitenv import isolated_env, recorded_env
from harness.runners.jsonl_process import JsonLinesRunner
from harness.runners.manifest import REFERENCE_DIR, ReferenceSpec

SERVER_DIR = REFERENCE_DIR / "letta_server"
SERVER_DRIVER = SERVER_DIR / "driver.py"
COMPARED_WITH = "letta-code@0.32.14"  # the port profile the server is compared with
COMPILE_SECONDS = 120.0  # one `git show` per file: scale-2000-flat-symbols takes about 16 s

Installer = Callable[[str], Path]


def ensure_server_env(version: str) -> Path:
    """The python of the pinned letta-server `version` venv (reference/letta_server/install.py), installed
    on first use; one install at a time (slots start in parallel threads; install.py also locks the venv)."""
    with _INSTALL_LOCK:
        return Path(_install_module().ensure_server_env(version))


_INSTALL_LOCK = threading.Lock()


@functools.cache
def _install_module() -> ModuleType:
    """reference/letta_server/install.py, loaded by path (reference/ is not a package)."""
    spec = importlib.util.spec_from_file_location("letta_conformance_server_install", SERVER_DIR / "install.py")
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load {SERVER_DIR / 'install.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LettaServerRunner(JsonLinesRunner):
    """One warm driver process per slot, restarted after a crash or a timeout like any JSON-lines child."""

    def __init__(
        self,
        spec: ReferenceSpec,
        home: Path,
        ceiling: Path | None,
        timeout: float = 60.0,
        installer: Installer = ensure_server_env,
    ) -> None:
        super().__init__(spec.label, [], None, max(timeout, COMPILE_SECONDS))
        self.spec, self.home, self.ceiling = spec, home, ceiling
        self.installer = installer
        self.python: Path | None = None

    def start(self) -> None:
        try:
            self.python = self.installer(self.spec.value)
        except Exception as error:  # any failure to install is the reference's start error, never a pass
            self.start_error = f"{self.spec.label}: its pinned environment could not be installed: {error}"
            return
        self.home.mkdir(parents=True, exist_ok=True)
        self.process.argv = [str(self.python), str(SERVER_DRIVER)]
        self.process.env = isolated_env(self.home, self.ceiling)  # LANG=C.UTF-8: git output decodes as UTF-8
        self.process.cwd = self.home
        super().start()  # `hello` waits max(timeout, 120 s): the import alone takes about 10 s

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update({"reference": self.spec.label, "product": "letta-server", "version": self.spec.value,
                     "python": str(self.python) if self.python else None, "compared_with": COMPARED_WITH})  # fmt: skip
        if self.process.env:
            info["env"] = recorded_env(self.process.env)
        if self.start_error:
            info["start_error"] = self.start_error
        return info
