"""A user's git configuration and environment cannot change what a scenario builds or what either side outputs.

A handful of corpus cases (names git quotes, CRLF, BOM, collation, work-tree noise staged with
`git add -A`, an unborn repository) run twice through `conformance run` in a subprocess: once
under a plain environment, once under a hostile one (global/system/XDG/env-injected git config
with core.autocrlf, core.quotePath=false, core.safecrlf, init.templateDir with hooks and an
info/exclude, commit signing with a bogus program, a global excludes file, user.useConfigOnly,
color.ui=always; GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY and dates; Turkish
or Danish locale; a far-off timezone). Both runs must build the same commits (memfsRevision and
refs/heads/main) and give the same report.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
CASE_IDS = [
    "names-unicode-dropped",
    "names-quotes-backslash",
    "names-control-chars",
    "newlines-crlf",
    "bom-crlf-frontmatter",
    "collation-icu-vs-codepoint",
    "worktree-staged",
    "worktree-every-kind",
    "worktree-unborn-staged",
    "smoke-basic",
]


@pytest.fixture(scope="module")
def locales(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """tr_TR and da_DK compiled into a LOCPATH of our own (Debian ships only C.UTF-8 by default)."""
    directory = tmp_path_factory.mktemp("locales")
    built = []
    for name, source, charmap in [("tr_TR.UTF-8", "tr_TR", "UTF-8"), ("da_DK.ISO-8859-1", "da_DK", "ISO-8859-1")]:
        subprocess.run(
            ["localedef", "-i", source, "-f", charmap, str(directory / name)], capture_output=True, check=False
        )
        if (directory / name).exists():
            built.append(name)
    return directory if built else None


def hostile_home(root: Path) -> dict[str, str]:
    """Every place git reads configuration from, filled with settings that would change a naive build."""
    hooks = root / "template" / "hooks"
    hooks.mkdir(parents=True)
    for hook in ("post-checkout", "pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        script = hooks / hook
        script.write_text('#!/bin/sh\nfor f in $(git ls-files); do echo hooked >> "$f"; done\nexit 0\n')
        script.chmod(0o755)
    (root / "template" / "info").mkdir()
    (root / "template" / "info" / "exclude").write_text("*\n")
    (root / "excludes").write_text("*.md\n*\n")
    (root / "attributes").write_text("* text eol=crlf filter=hostile\n")
    config = f"""[core]
    autocrlf = true
    safecrlf = true
    quotePath = false
    excludesFile = {root / "excludes"}
    attributesFile = {root / "attributes"}
    hooksPath = {hooks}
    precomposeUnicode = true
    ignoreCase = true
    fileMode = false
    symlinks = false
    splitIndex = true
[init]
    templateDir = {root / "template"}
    defaultBranch = hostile
[commit]
    gpgSign = true
[tag]
    gpgSign = true
[gpg]
    program = /bin/false
[user]
    useConfigOnly = true
[color]
    ui = always
[filter "hostile"]
    clean = sed s/a/HOSTILE/g
    smudge = sed s/a/HOSTILE/g
[status]
    showUntrackedFiles = all
[log]
    showSignature = true
[diff]
    noprefix = true
[i18n]
    logOutputEncoding = ISO-8859-1
"""
    for path in (root / "home" / ".gitconfig", root / "xdg" / "git" / "config", root / "global", root / "system"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    bogus = root / "bogus"
    bogus.mkdir()
    subprocess.run(["git", "init", "-q", str(bogus)], check=True, env={"PATH": os.environ["PATH"], "HOME": str(root)})
    return {
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "xdg"),
        "GIT_CONFIG_GLOBAL": str(root / "global"),
        "GIT_CONFIG_SYSTEM": str(root / "system"),
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "core.quotePath",
        "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "core.autocrlf",
        "GIT_CONFIG_VALUE_1": "true",
        "GIT_CONFIG_PARAMETERS": "'core.quotepath'='false'",
        "GIT_TEMPLATE_DIR": str(root / "template"),
        "GIT_DIR": str(bogus / ".git"),
        "GIT_WORK_TREE": str(bogus),
        "GIT_INDEX_FILE": str(bogus / "other-index"),
        "GIT_OBJECT_DIRECTORY": str(bogus / ".git" / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(bogus / ".git" / "objects"),
        "GIT_COMMON_DIR": str(bogus / ".git"),
        "GIT_NAMESPACE": "hostile",
        "GIT_CEILING_DIRECTORIES": "/",
        "GIT_AUTHOR_NAME": "Hostile",
        "GIT_AUTHOR_EMAIL": "hostile@example.invalid",
        "GIT_AUTHOR_DATE": "1999-12-31T23:59:59+14:00",
        "GIT_COMMITTER_NAME": "Hostile",
        "GIT_COMMITTER_EMAIL": "hostile@example.invalid",
        "GIT_COMMITTER_DATE": "1999-12-31T23:59:59+14:00",
        "GIT_PAGER": "cat",
        "GIT_TRACE": "0",
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_ICASE_PATHSPECS": "1",
    }


def conformance(cache: Path, report: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cases = [str(REPO / "cases" / "compile" / f"{case}.yaml") for case in CASE_IDS]
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *cases, "--report", str(report), "--no-timing"],
        cwd=REPO,
        env={**env, "LETTA_CONFORMANCE_CACHE": str(cache)},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def shared_cache(path: Path, real: Path) -> Path:
    """A fresh cache (repos built anew) that shares the already-fetched bun and releases."""
    path.mkdir()
    for name in ("bun", "letta-code", "pypi", "node"):
        if (real / name).exists():
            (path / name).symlink_to(real / name)
    return path


def normalized(report: Path, cache: Path) -> str:
    """report.json with the cache and the report directory (in the recorded command) made neutral."""
    return report.read_text(encoding="ascii").replace(str(cache), "<cache>").replace(str(report.parent), "<report>")


def heads(cache: Path) -> dict[str, str]:
    refs = (cache / "repos").glob("*/memory/.git/refs/heads/main")
    return {ref.parents[4].name: ref.read_text() for ref in refs}


@pytest.mark.parametrize(
    ("locale", "tz"), [("tr_TR.UTF-8", "Pacific/Kiritimati"), ("da_DK.ISO-8859-1", "America/St_Johns")]
)
def test_a_hostile_git_config_and_environment_change_nothing(
    tmp_path: Path, reference_bun: Path, release_bundle, locales: Path | None, locale: str, tz: str
) -> None:
    from harness.acquire.releases import cache_root
    from harness.core.registries import load_manifest

    release_bundle(load_manifest()["default"])
    real = cache_root()
    plain_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "plain-home")}
    plain_cache = shared_cache(tmp_path / "plain-cache", real)
    plain = conformance(plain_cache, tmp_path / "plain-report", plain_env)
    assert plain.returncode == 0, plain.stderr

    hostile_env = {
        **os.environ,
        **hostile_home(tmp_path / "hostile"),
        "LANG": locale,
        "LC_ALL": locale,
        "LC_COLLATE": locale,
        "LANGUAGE": "tr",
        "TZ": tz,
    }
    if locales is not None:
        hostile_env["LOCPATH"] = str(locales)
    hostile_cache = shared_cache(tmp_path / "hostile-cache", real)
    hostile = conformance(hostile_cache, tmp_path / "hostile-report", hostile_env)
    assert hostile.returncode == 0, hostile.stderr

    assert heads(hostile_cache) == heads(plain_cache) and len(heads(plain_cache)) >= 8
    plain_report = normalized(tmp_path / "plain-report" / "report.json", plain_cache)
    hostile_report = normalized(tmp_path / "hostile-report" / "report.json", hostile_cache)
    assert json.loads(plain_report)["counts"]["pass"] == len(CASE_IDS)
    assert hostile_report == plain_report


def test_the_hostile_settings_would_matter_to_an_unisolated_git(tmp_path: Path) -> None:
    # The control: the same hostile environment does change what plain git does, so the test above
    # is not passing because the settings are inert.
    env = {**os.environ, **hostile_home(tmp_path / "hostile")}
    work = tmp_path / "work"
    work.mkdir()
    for key in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
    ):
        env.pop(key)
    subprocess.run(["git", "init", "-q"], cwd=work, env=env, check=True)
    assert (work / ".git" / "info" / "exclude").read_text() == "*\n"  # the template was used
    quoted = subprocess.run(["git", "config", "core.quotePath"], cwd=work, env=env, capture_output=True, text=True)
    assert quoted.stdout.strip() == "false"
    assert (
        subprocess.run(
            ["git", "commit", "--allow-empty", "-qm", "x"], cwd=work, env=env, capture_output=True
        ).returncode
        != 0
    )  # signing with /bin/false fails
