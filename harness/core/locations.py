"""Where the project's data is, decided once: the corpus (cases/) and the reference directory (reference/).

In a checkout (an editable install is one) they are the folders beside harness/. Installed from a wheel, an
sdist or a git URL they are package data beside harness/ in site-packages: `letta_conformance/cases` and
`letta_conformance/reference`, which pyproject.toml maps onto those same folders (mapped, not moved, so the
checkout keeps its layout). Nothing is ever written here: releases, bun and the result store live in the cache
directory (harness.acquire.releases.cache_root), reports and written cases wherever the user says.

Which corpus a command reads when it is given none is `default_cases`: ./cases when the current directory holds
one (a checkout, or a corpus written out with `conformance cases export`), else the corpus installed with the
tool. Commands that write cases write only into ./cases (harness.cli.common.cases_dir), never into the tool.
"""

from __future__ import annotations

from pathlib import Path

#: The directory holding harness/: a checkout's root, or site-packages when the tool is installed.
SOURCE_ROOT = Path(__file__).resolve().parents[2]
#: The package the corpus and the reference directory are installed under (pyproject.toml's package-dir).
DATA_PACKAGE = "letta_conformance"
#: The corpus of the current directory, relative so that messages and reports name it as the user does.
LOCAL_CASES = Path("cases")


def checkout_root() -> Path | None:
    """The checkout harness runs from (its pyproject.toml beside reference/manifest.json), None when installed."""
    if (SOURCE_ROOT / "pyproject.toml").is_file() and (SOURCE_ROOT / "reference" / "manifest.json").is_file():
        return SOURCE_ROOT
    return None


def data_root() -> Path:
    """The directory holding cases/ and reference/: the checkout, or the installed data package."""
    return checkout_root() or SOURCE_ROOT / DATA_PACKAGE


def reference_dir() -> Path:
    """reference/: driver.mjs, manifest.json, protocol.schema.json, runtime-deps/, upstream-tests/, letta_server/."""
    return data_root() / "reference"


def project_cases() -> Path:
    """The corpus that ships with the tool (compile/, lifecycle/, rules.yaml): read, exported, never written."""
    return data_root() / "cases"


def default_cases() -> Path:
    """The corpus a command reads when it is given no scenario paths: ./cases when there is one, else the tool's."""
    return LOCAL_CASES if LOCAL_CASES.is_dir() else project_cases()
