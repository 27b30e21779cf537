"""The Letta server (PyPI `letta` <= 0.16.8) as an implementation under test: `--impl letta-server:0.16.8`.

The other product that renders the same git memory format (docs/products.md). Its driver,
reference/letta_server/driver.py, speaks the protocol (docs/protocol.md: `hello`, `compile`;
lifecycle ops are answered `unsupported`: the server's turn loop needs its database), so this is a
plain JsonLinesRunner run by the python of a pinned, hash-checked venv in the cache
(reference/letta_server/install.py, `ensure_server_env`). If that venv cannot be installed, that is
the implementation's start error: every case is an error.

It is compared with the letta-code references directly, on the product view's fields only
(harness.core.fields.PRODUCT, chosen by harness.runners.references.view_for); each difference is
a `product-difference` in its expectations file, expectations/letta-server-VERSION.yaml.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.acquire.manifest import REFERENCE_DIR
from harness.core.model import LifecycleOpen, Outcome
from harness.repo.gitenv import isolated_env, recorded_env
from harness.runners.implementations import SERVER, ImplContext, ImplSpec
from harness.runners.jsonl_process import JsonLinesRunner

SERVER_DIR = REFERENCE_DIR / "letta_server"
SERVER_DRIVER = SERVER_DIR / "driver.py"
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
        version: str,
        home: Path,
        ceiling: Path | None,
        timeout: float = 60.0,
        installer: Installer = ensure_server_env,
    ) -> None:
        self.spec = ImplSpec(SERVER, version)
        super().__init__(self.spec.label, [], None, max(timeout, COMPILE_SECONDS))
        self.home, self.ceiling = home, ceiling
        self.installer = installer
        self.python: Path | None = None

    def start(self) -> None:
        if self.python is not None or self.start_error:
            return  # started once; JsonLinesProcess restarts the driver after a crash
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
        info.update(
            {
                "implementation": self.spec.label,
                "product": SERVER,
                "version": self.spec.value,
                "python": str(self.python) if self.python else None,
            }
        )
        if self.process.env:
            info["env"] = recorded_env(self.process.env)
        if self.start_error:
            info["start_error"] = self.start_error
        return info

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        return Outcome(
            "unsupported", error="the Letta server's driver has no turn loop (it needs the server's database)"
        )


def make_runner(spec: ImplSpec, profile: str, context: ImplContext) -> LettaServerRunner:
    """`--impl letta-server:VERSION`; the profile does not matter to it (it is compared on the product view)."""
    return LettaServerRunner(spec.value, context.home, context.ceiling, context.timeout)
