"""Which of upstream's test files `upstream-tests` runs, and the shim that replaces the compiler module.

**Selection** (one rule, `select_tests`): a test file under `src/` (bun's names: `*.test.*`, `*_test.*`,
`*.spec.*`, `*_spec.*`) is selected when one of its imports (static, `import()`, `require()` or
`mock.module()`), resolved as upstream resolves it (relative, or through tsconfig.json's `paths`), is
- the compiler module (`src/backend/local/system-prompt-compilation.ts`, or `systemPromptCompilation.ts`
  before the rename), which holds the skills block too (`compileAvailableSkillsBlock`,
  `appendAvailableSkillsBlock`);
- the frontmatter parser (`src/utils/frontmatter.ts`);
- LocalBackend (`local-backend.ts` / `LocalBackend.ts`, or the `src/backend/local` index), and the file tests
  its prompt cache: it names one of PROMPT_CACHE_TERMS (`CORE_MEMORY`, `memory_update`, `memfsRevision`,
  `midConversationSystemPrompt`).

**The shim** (`shim_module`): reference/upstream-tests/shim.ts with the revision's details filled in. It is
written at the compiler module's path; the compiler itself moves beside it (`<name>.conformance-upstream.ts`)
and the shim re-exports everything of it (`export *`) but the FORWARDED functions, which go to the
implementation under test. When a call leaves `memoryDir` out, the shim asks the same function upstream's
compiler asks (found in the compiler's source: `options.memoryDir ?? NAME(agent.id)`).
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from harness.acquire.manifest import REFERENCE_DIR
from harness.acquire.revision_source import COMPILER_ENTRIES, LOCAL_BACKEND_MODULES, TreeEntry
from harness.report.upstream_records import SelectedFile

FRONTMATTER = "src/utils/frontmatter.ts"
LOCAL_INDEX = "src/backend/local/index.ts"
PROMPT_CACHE_TERMS = ("CORE_MEMORY", "memory_update", "memfsRevision", "midConversationSystemPrompt")
SKILLS_BLOCK = ("compileAvailableSkillsBlock", "appendAvailableSkillsBlock")
#: the compiler's functions the shim forwards to the implementation under test (reference/upstream-tests/shim.ts)
FORWARDED = ("compileLocalSystemPrompt", "hashRawSystemPrompt", "getCommittedMemfsRevision", *SKILLS_BLOCK)
UPSTREAM_SUFFIX = ".conformance-upstream"  # the compiler moved beside its shim: <name>.conformance-upstream.ts
SHIM_DIR = REFERENCE_DIR / "upstream-tests"
SHIM_TEMPLATE = SHIM_DIR / "shim.ts"
PRELOAD = SHIM_DIR / "preload.ts"

_TEST_FILE = re.compile(r"(?:\.test|_test|\.spec|_spec)\.(?:ts|tsx|js|jsx|mjs|cjs|mts|cts)$")
_SPECIFIERS = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bmock\.module\s*\(\s*)(["'])([^"'\n]+)\1"""
)
_NAMED_IMPORT = re.compile(r"""\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*(["'])([^"'\n]+)\2""")
_PATHS = re.compile(r'"([^"*]*)\*"\s*:\s*\[\s*"([^"*]*)\*"')
_EXPORTS = re.compile(r"^export\s+(?:async\s+)?(?:function\s*\*?|const|let|class)\s+(\w+)", re.M)
_DEFAULT_MEMORY_DIR = re.compile(r"options\.memoryDir\s*\?\?\s*(\w+)\s*\(")


def is_test_file(path: str) -> bool:
    """bun test's file names, under src/."""
    return path.startswith("src/") and bool(_TEST_FILE.search(path))


def path_aliases(tsconfig: bytes | None) -> list[tuple[str, str]]:
    """tsconfig.json's `paths` as (prefix, directory) pairs: `"@/*": ["./src/*"]` is ("@/", "src/")."""
    text = (tsconfig or b"").decode("utf-8", "replace")
    return [(alias, posixpath.normpath(target).rstrip("/") + "/") for alias, target in _PATHS.findall(text) if alias]


def resolve(
    specifier: str, importer: str, aliases: list[tuple[str, str]], paths: set[str] | dict[str, TreeEntry]
) -> str | None:
    """The repository path an import names, as bun resolves it (extension and index optional), or None."""
    if specifier.startswith("."):
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    else:
        alias = next(((a, d) for a, d in aliases if specifier.startswith(a)), None)
        if alias is None:
            return None  # a package or a builtin
        base = alias[1] + specifier[len(alias[0]) :]
    stem = re.sub(r"\.(?:js|mjs|cjs|jsx)$", "", base)
    for candidate in (base, *(f"{stem}{ext}" for ext in (".ts", ".tsx", ".js", ".mjs")), f"{base}/index.ts"):
        if candidate in paths:
            return candidate
    return None


def compiler_names(source: str, importer: str, aliases: list[tuple[str, str]], paths: set[str]) -> list[str]:
    """The names a file imports from the compiler module."""
    names: list[str] = []
    for match in _NAMED_IMPORT.finditer(source):
        if resolve(match.group(3), importer, aliases, paths) in COMPILER_ENTRIES:
            for part in match.group(1).split(","):
                name = part.strip().removeprefix("type ").split(" as ")[0].strip()
                if name:
                    names.append(name)
    return names


def selection_reasons(source: str, importer: str, aliases: list[tuple[str, str]], paths: set[str]) -> list[str]:
    """Why a test file is selected (empty: it is not)."""
    imported = {resolve(m.group(2), importer, aliases, paths) for m in _SPECIFIERS.finditer(source)}
    reasons = []
    compiler = next((p for p in COMPILER_ENTRIES if p in imported), None)
    if compiler:
        names = compiler_names(source, importer, aliases, paths)
        skills = [n for n in names if n in SKILLS_BLOCK]
        reasons.append(
            f"imports the compiler module ({compiler})"
            + (f", the skills block ({', '.join(skills)})" if skills else "")
        )
    if FRONTMATTER in imported:
        reasons.append(f"imports the frontmatter parser ({FRONTMATTER})")
    backend = next((p for p in (*LOCAL_BACKEND_MODULES, LOCAL_INDEX) if p in imported), None)
    terms = [t for t in PROMPT_CACHE_TERMS if t in source]
    if backend and terms:
        reasons.append(f"imports LocalBackend ({backend}) and tests its prompt cache ({', '.join(terms)})")
    return reasons


def select_tests(root: Path, paths: set[str]) -> list[SelectedFile]:
    """The selected test files of a source tree (the rule above), in path order."""
    aliases = path_aliases(_read(root / "tsconfig.json"))
    selected = []
    for path in sorted(p for p in paths if is_test_file(p)):
        source = (_read(root / path) or b"").decode("utf-8", "replace")
        reasons = selection_reasons(source, path, aliases, paths)
        if reasons:
            selected.append(SelectedFile(path, reasons, compiler_names(source, path, aliases, paths)))
    return selected


def bunfig_preloads(bunfig: bytes | None) -> list[str]:
    """The `[test] preload` files of bunfig.toml (repository paths): upstream's own test set-up."""
    text = (bunfig or b"").decode("utf-8", "replace")
    section = re.search(r"^\[test\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not section:
        return []
    found = re.search(r"^\s*preload\s*=\s*(\[[^\]]*\]|\"[^\"]*\")", section.group(1), re.M)
    if not found:
        return []
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return []
    return [posixpath.normpath(p) for p in ([value] if isinstance(value, str) else value) if isinstance(p, str)]


@dataclass(frozen=True)
class Shim:
    """The shim of one revision's compiler module: its text, where the compiler moves, what is forwarded."""

    compiler: str  # the compiler module's path (where the shim is written)
    upstream: str  # where the compiler moves
    text: str
    forwarded: list[str]  # the compiler's exports the shim forwards
    kept: list[str]  # the compiler's exports left to upstream's code
    default_memory_dir: str | None  # the function upstream asks when memoryDir is left out


def shim_module(compiler: str, source: str) -> Shim:
    """The shim for the compiler module at `compiler` whose source is `source`."""
    stem = posixpath.splitext(posixpath.basename(compiler))[0]
    upstream = posixpath.join(posixpath.dirname(compiler), f"{stem}{UPSTREAM_SUFFIX}.ts")
    exports = list(dict.fromkeys(_EXPORTS.findall(source)))
    function = _DEFAULT_MEMORY_DIR.search(source)
    default_import = "const conformanceDefaultMemoryDir: ((agentId: string) => string) | undefined = undefined;"
    found = None
    if function:
        for match in _NAMED_IMPORT.finditer(source):
            names = [part.strip().split(" as ") for part in match.group(1).split(",")]
            for name in names:
                if name[-1].strip() == function.group(1):
                    found = function.group(1)
                    local = f"{name[0].strip()} as conformanceDefaultMemoryDir"
                    default_import = f'import {{ {local} }} from "{match.group(3)}";'
    text = SHIM_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace("// @conformance-default-memory-dir", default_import)
    text = text.replace("./__CONFORMANCE_UPSTREAM__", f"./{stem}{UPSTREAM_SUFFIX}")
    forwarded = [name for name in exports if name in FORWARDED]
    kept = [name for name in exports if name not in FORWARDED]
    return Shim(compiler, upstream, text, forwarded, kept, found)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
