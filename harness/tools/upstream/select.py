"""Which of upstream's test files `upstream-tests` runs, and the shims that stand in for upstream's modules.

**Swap targets** (`TARGETS`, the table): one row per upstream module the suite can stand in for. A row says
where the module lives at each revision (`modules`, the first that defines one of the forwarded exports is the
revision's), which of its exports the shim forwards and to which protocol op (`exports`: the documentation's
table, docs/upstream-tests.md, is these rows), how a test file is selected for it (`reasons`), and how its shim
is made (`build`). Rows, in order:
- `compiler`: the compiler module (`src/backend/local/system-prompt-compilation.ts`, or
  `systemPromptCompilation.ts` before the rename), which holds the skills block too; a test file is selected
  when one of its imports (static, `import()`, `require()` or `mock.module()`, resolved as upstream resolves it:
  relative, or through tsconfig.json's `paths`) is the compiler module, the frontmatter parser
  (`src/utils/frontmatter.ts`), or LocalBackend (`local-backend.ts` / `LocalBackend.ts`, or the
  `src/backend/local` index) in a file that tests its prompt cache (it names one of PROMPT_CACHE_TERMS);
- `pre-commit-hook`: `PRE_COMMIT_HOOK_SCRIPT` (`src/agent/memoryGit.ts` in 0.25.x,
  `src/agent/memory-git-hooks.ts` later); a file is selected when it imports that name from the module;
- `memory-tool`: the memory tool's `memory(args)` (`src/tools/impl/Memory.ts` in 0.25.x,
  `src/tools/impl/memory.ts` later); a file is selected when it imports `memory` from the module (a named
  import, or `const { memory } = await import(...)`);
- `post-turn-sync`: `syncPendingMemoryCommitsAfterTurn` (`src/agent/memory-git.ts`, 0.30.28 and later); a file
  is selected when it imports that name from the module.

**The shim** of a target (`Shim`): its template under reference/upstream-tests/ with the revision's details
filled in. It is written at the module's path; the module itself moves beside it
(`<name>.conformance-upstream.ts`) and the shim re-exports everything of it (`export *`) but the forwarded
exports, which go to the implementation under test. A test file runs with the shims of the targets that
selected it, and only those.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.acquire.manifest import REFERENCE_DIR
from harness.acquire.revision_source import COMPILER_ENTRIES, LOCAL_BACKEND_MODULES, TreeEntry
from harness.report.upstream_records import SelectedFile

FRONTMATTER = "src/utils/frontmatter.ts"
LOCAL_INDEX = "src/backend/local/index.ts"
PROMPT_CACHE_TERMS = ("CORE_MEMORY", "memory_update", "memfsRevision", "midConversationSystemPrompt")
SKILLS_BLOCK = ("compileAvailableSkillsBlock", "appendAvailableSkillsBlock")
UPSTREAM_SUFFIX = ".conformance-upstream"  # a module moved beside its shim: <name>.conformance-upstream.ts
SHIM_DIR = REFERENCE_DIR / "upstream-tests"
SHIM_TEMPLATE = SHIM_DIR / "shim.ts"
HOOK_SHIM_TEMPLATE = SHIM_DIR / "hook-shim.ts"
MEMORY_TOOL_SHIM_TEMPLATE = SHIM_DIR / "memory-tool-shim.ts"
POST_TURN_SYNC_SHIM_TEMPLATE = SHIM_DIR / "post-turn-sync-shim.ts"
BRIDGE_CLIENT = SHIM_DIR / "bridge-client.ts"  # put after the text of every shim that forwards through the bridge
PRELOAD = SHIM_DIR / "preload.ts"
HOOK_CLIENT = Path(__file__).with_name("hook_client.py")
#: what a shim leaves for the shim run to fill in (values only the run knows: the bridge's files)
HOOK_COMMAND = "__CONFORMANCE_HOOK_COMMAND__"

_TEST_FILE = re.compile(r"(?:\.test|_test|\.spec|_spec)\.(?:ts|tsx|js|jsx|mjs|cjs|mts|cts)$")
_SPECIFIERS = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bmock\.module\s*\(\s*)(["'])([^"'\n]+)\1"""
)
_NAMED_IMPORT = re.compile(r"""\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*(["'])([^"'\n]+)\2""")
# `const { memory } = await import("@/tools/impl/memory")` (upstream imports a module after mock.module so)
_DESTRUCTURED_IMPORT = re.compile(
    r"""\{([^{}]*)\}\s*=\s*(?:await\s+)?(?:import|require)\s*\(\s*(["'])([^"'\n]+)\2\s*\)"""
)
_PATHS = re.compile(r'"([^"*]*)\*"\s*:\s*\[\s*"([^"*]*)\*"')
_EXPORTS = re.compile(r"^export\s+(?:async\s+)?(?:function\s*\*?|const|let|class)\s+(\w+)", re.M)
_DEFAULT_MEMORY_DIR = re.compile(r"options\.memoryDir\s*\?\?\s*(\w+)\s*\(")
_BACKEND_IMPORT = re.compile(r"""\{\s*getBackend\s*\}\s*=\s*await\s+import\s*\(\s*(["'])([^"'\n]+)\1\s*\)""")


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


def imported_names(
    source: str, importer: str, aliases: list[tuple[str, str]], paths: set[str], modules: tuple[str, ...]
) -> list[str]:
    """The names a file imports from any of `modules`: `import { a, b as c } from` and
    `const { a } = await import(...)` / `require(...)`."""
    names: list[str] = []
    for pattern in (_NAMED_IMPORT, _DESTRUCTURED_IMPORT):
        for match in pattern.finditer(source):
            if resolve(match.group(3), importer, aliases, paths) in modules:
                for part in match.group(1).split(","):
                    name = re.split(r"\s+as\s+|\s*:\s*", part.strip().removeprefix("type ").strip())[0].strip()
                    if name:
                        names.append(name)
    return names


def compiler_names(source: str, importer: str, aliases: list[tuple[str, str]], paths: set[str]) -> list[str]:
    """The names a file imports from the compiler module."""
    return imported_names(source, importer, aliases, paths, COMPILER_ENTRIES)


@dataclass(frozen=True)
class Imports:
    """One test file as the selection sees it: its source and the repository paths its imports resolve to."""

    source: str
    importer: str
    aliases: list[tuple[str, str]]
    paths: set[str]
    imported: set[str | None]

    def names_from(self, modules: tuple[str, ...]) -> list[str]:
        return imported_names(self.source, self.importer, self.aliases, self.paths, modules)


def imports_of(source: str, importer: str, aliases: list[tuple[str, str]], paths: set[str]) -> Imports:
    imported = {resolve(m.group(2), importer, aliases, paths) for m in _SPECIFIERS.finditer(source)}
    return Imports(source, importer, aliases, paths, imported)


@dataclass(frozen=True)
class Forwarded:
    """One forwarded export of a swap target: what upstream's code calls, the protocol op it becomes, what is
    sent and which part of the answer upstream's caller gets (a row of docs/upstream-tests.md's table)."""

    export: str
    op: str
    sent: str
    used: str


@dataclass(frozen=True)
class Shim:
    """The shim of one revision's module of one swap target: its text, where the module moves, what is
    forwarded."""

    compiler: str  # the module's path (where the shim is written); named for the first target, the compiler
    upstream: str  # where the module moves
    text: str  # may hold placeholders the shim run fills in (`placed_text`)
    forwarded: list[str]  # the module's exports the shim forwards
    kept: list[str]  # the module's exports left to upstream's code
    default_memory_dir: str | None  # the compiler's: the function upstream asks when memoryDir is left out
    target: str = "compiler"


@dataclass(frozen=True)
class SwapTarget:
    """One upstream module the suite can stand in for (a row of TARGETS; the module docstring)."""

    name: str
    description: str  # for reports and --target's help
    modules: tuple[str, ...]  # where the module lives, by revision (the first defining a forwarded export)
    exports: tuple[Forwarded, ...]
    reasons: Callable[[Imports], list[str]]  # why a test file is selected for this target (empty: it is not)
    build: Callable[[str, str], Shim]  # (module path, module source) -> the shim
    template: Path = field(default=SHIM_TEMPLATE)

    @property
    def forwarded(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.export for f in self.exports))

    def module_of(self, read: Callable[[str], str | None]) -> str | None:
        """The revision's module of this target: the first of `modules` that defines a forwarded export."""
        for path in self.modules:
            source = read(path)
            if source is not None and set(_EXPORTS.findall(source)) & set(self.forwarded):
                return path
        return None


def _compiler_reasons(found: Imports) -> list[str]:
    reasons = []
    compiler = next((p for p in COMPILER_ENTRIES if p in found.imported), None)
    if compiler:
        skills = [n for n in found.names_from(COMPILER_ENTRIES) if n in SKILLS_BLOCK]
        reasons.append(
            f"imports the compiler module ({compiler})"
            + (f", the skills block ({', '.join(skills)})" if skills else "")
        )
    if FRONTMATTER in found.imported:
        reasons.append(f"imports the frontmatter parser ({FRONTMATTER})")
    backend = next((p for p in (*LOCAL_BACKEND_MODULES, LOCAL_INDEX) if p in found.imported), None)
    terms = [t for t in PROMPT_CACHE_TERMS if t in found.source]
    if backend and terms:
        reasons.append(f"imports LocalBackend ({backend}) and tests its prompt cache ({', '.join(terms)})")
    return reasons


def _named_reasons(modules: tuple[str, ...], names: tuple[str, ...], what: str) -> Callable[[Imports], list[str]]:
    """The rule of a target selected by name: the file imports one of `names` from one of `modules`."""

    def reasons(found: Imports) -> list[str]:
        for module in modules:
            named = [n for n in dict.fromkeys(found.names_from((module,))) if n in names]
            if named:
                return [f"imports {what} ({', '.join(named)} from {module})"]
        return []

    return reasons


def named_import(source: str, name: str) -> tuple[str, str] | None:
    """Where a module imports `name` from: (the imported name, its specifier) for `import { imported as name }`
    or `import { name }`, else None."""
    for match in _NAMED_IMPORT.finditer(source):
        for part in match.group(1).split(","):
            pieces = [piece.strip() for piece in part.strip().removeprefix("type ").split(" as ")]
            if pieces[-1] == name:
                return pieces[0], match.group(3)
    return None


def shim_module(compiler: str, source: str) -> Shim:
    """The compiler's shim (reference/upstream-tests/shim.ts) for the module at `compiler` whose source is
    `source`. When a call leaves `memoryDir` out, the shim asks the same function upstream's compiler asks
    (found in the compiler's source: `options.memoryDir ?? NAME(agent.id)`)."""
    function = _DEFAULT_MEMORY_DIR.search(source)
    default_import = "const conformanceDefaultMemoryDir: ((agentId: string) => string) | undefined = undefined;"
    found = None
    imported = named_import(source, function.group(1)) if function else None
    if function and imported:
        found = function.group(1)
        default_import = f'import {{ {imported[0]} as conformanceDefaultMemoryDir }} from "{imported[1]}";'
    text = SHIM_TEMPLATE.read_text(encoding="utf-8").replace("// @conformance-default-memory-dir", default_import)
    return _shim(COMPILER, compiler, source, text + "\n" + BRIDGE_CLIENT.read_text(encoding="utf-8"), found)


def hook_shim(module: str, source: str) -> Shim:
    """The pre-commit hook's shim (reference/upstream-tests/hook-shim.ts): `PRE_COMMIT_HOOK_SCRIPT` becomes a hook
    that runs hook_client.py (its command is filled in by the shim run: `placed_text`)."""
    return _shim(PRE_COMMIT_HOOK, module, source, HOOK_SHIM_TEMPLATE.read_text(encoding="utf-8"), None)


#: what the memory tool's shim asks with upstream's own code: (the name the tool imports, the shim's local name)
MEMORY_TOOL_HELPERS = (
    ("getCurrentAgentId", "conformanceCurrentAgentId"),
    ("resolveScopedMemoryDir", "conformanceScopedMemoryDir"),
)


#: what the post-turn sync's shim asks with upstream's own code
POST_TURN_SYNC_HELPERS = (("getScopedMemoryFilesystemRoot", "conformanceScopedMemoryRoot"),)


def _helpers_shim(
    target: SwapTarget, module: str, source: str, helpers: tuple[tuple[str, str], ...], marker: str
) -> Shim:
    """A shim that asks upstream's own functions, imported from where the module imports them (`helpers`: the
    name, the shim's local name) and its backend (`await import(...)` of `getBackend`); when one is missing from
    the module's source, every call is not applicable, saying which."""
    lines, missing = [], []
    for name, local in helpers:
        imported = named_import(source, name)
        if imported:
            lines.append(f'import {{ {imported[0]} as {local} }} from "{imported[1]}";')
        else:
            missing.append(name)
            lines.append(f"const {local} = (..._: any[]): any => null;")
    backend = _BACKEND_IMPORT.search(source)
    if not backend:
        missing.append("getBackend (`await import(...)`)")
    text = target.template.read_text(encoding="utf-8").replace(marker, "\n".join(lines))
    text = text.replace("__CONFORMANCE_BACKEND__", json.dumps(backend.group(2) if backend else "node:fs"))
    what = f"the shim could not find upstream's {', '.join(missing)} in {module}"
    text = text.replace("__CONFORMANCE_MISSING__", json.dumps(what) if missing else "null")
    return _shim(target, module, source, text + "\n" + BRIDGE_CLIENT.read_text(encoding="utf-8"), None)


def memory_tool_shim(module: str, source: str) -> Shim:
    """The memory tool's shim (reference/upstream-tests/memory-tool-shim.ts): `memory(args)` becomes memory_write,
    with the memory directory, the agent and the sync mode found by the functions the tool itself imports (from
    the same modules)."""
    return _helpers_shim(MEMORY_TOOL, module, source, MEMORY_TOOL_HELPERS, "// @conformance-memory-imports")


def post_turn_sync_shim(module: str, source: str) -> Shim:
    """The post-turn sync's shim (reference/upstream-tests/post-turn-sync-shim.ts):
    `syncPendingMemoryCommitsAfterTurn` becomes memory_reminder, with upstream's default memory directory and
    its backend's capabilities."""
    return _helpers_shim(POST_TURN_SYNC, module, source, POST_TURN_SYNC_HELPERS, "// @conformance-sync-imports")


def _shim(target: SwapTarget, module: str, source: str, text: str, default_memory_dir: str | None) -> Shim:
    stem = posixpath.splitext(posixpath.basename(module))[0]
    upstream = posixpath.join(posixpath.dirname(module), f"{stem}{UPSTREAM_SUFFIX}.ts")
    exports = list(dict.fromkeys(_EXPORTS.findall(source)))
    text = text.replace("./__CONFORMANCE_UPSTREAM__", f"./{stem}{UPSTREAM_SUFFIX}")
    forwarded = [name for name in exports if name in target.forwarded]
    kept = [name for name in exports if name not in target.forwarded]
    return Shim(module, upstream, text, forwarded, kept, default_memory_dir, target.name)


def hook_command(python: str, config: Path) -> str:
    """The pre-commit hook the hook shim exports: a shell script git runs, which runs hook_client.py with the
    harness's Python and the bridge's configuration (absolute paths, baked in when the shim is placed)."""
    return (
        "#!/bin/sh\n"
        "# letta-conformance upstream-tests: this pre-commit hook asks the implementation under test (op validate)\n"
        f"exec {shlex.quote(python)} {shlex.quote(str(HOOK_CLIENT))} {shlex.quote(str(config))}\n"
    )


def placed_text(shim: Shim, values: dict[str, str]) -> str:
    """The shim's text with what only the shim run knows filled in (each placeholder as a JSON string)."""
    text = shim.text
    for placeholder, value in values.items():
        text = text.replace(placeholder, json.dumps(value))
    return text


COMPILER = SwapTarget(
    "compiler",
    "the compiler module, the skills block, the frontmatter parser and LocalBackend's prompt cache",
    COMPILER_ENTRIES,
    (
        Forwarded(
            "compileLocalSystemPrompt",
            "compile",
            "memoryDir, `agent.system`, `agent.id`, conversationId, `now` as ISO or `Invalid Date`, "
            "previousMessageCount, includeMemfs",
            "`record` (a missing `memfsRevision` key comes back present and undefined, as upstream's object "
            "literal has it)",
        ),
        Forwarded(
            "hashRawSystemPrompt",
            "compile",
            "a directory that does not exist, `includeMemfs: false`",
            "`record.rawSystemHash`",
        ),
        Forwarded("getCommittedMemfsRevision", "compile", "`dir`", "`record.memfsRevision`"),
        Forwarded("compileAvailableSkillsBlock", "skills_block", '`systemPrompt: ""`', "`block`"),
        Forwarded("appendAvailableSkillsBlock", "skills_block", "the prompt and the skills", "`appended`"),
    ),
    _compiler_reasons,
    shim_module,
)
HOOK_MODULES = ("src/agent/memory-git-hooks.ts", "src/agent/memory-git.ts", "src/agent/memoryGit.ts")
PRE_COMMIT_HOOK = SwapTarget(
    "pre-commit-hook",
    "the memory repository's pre-commit hook (PRE_COMMIT_HOOK_SCRIPT)",
    HOOK_MODULES,
    (
        Forwarded(
            "PRE_COMMIT_HOOK_SCRIPT",
            "validate",
            "memoryDir: the repository's top (where git runs the hook), the revision's profile",
            "`validation.messages` printed to stderr, one a line; exit 0 when `validation.accepted`, else 1",
        ),
    ),
    _named_reasons(HOOK_MODULES, ("PRE_COMMIT_HOOK_SCRIPT",), "the pre-commit hook"),
    hook_shim,
    HOOK_SHIM_TEMPLATE,
)
MEMORY_TOOL_MODULES = ("src/tools/impl/memory.ts", "src/tools/impl/Memory.ts")
MEMORY_TOOL = SwapTarget(
    "memory-tool",
    "the memory write tool (memory(args))",
    MEMORY_TOOL_MODULES,
    (
        Forwarded(
            "memory",
            "memory_write",
            "memoryDir, the agent's id and name and the backend's sync mode (found by upstream's own functions, "
            "as the tool finds them), command, the other arguments in the call's order",
            "`written` as `{message}`, `thrown` thrown",
        ),
    ),
    _named_reasons(MEMORY_TOOL_MODULES, ("memory",), "the memory tool"),
    memory_tool_shim,
    MEMORY_TOOL_SHIM_TEMPLATE,
)
POST_TURN_SYNC_MODULES = ("src/agent/memory-git.ts",)
POST_TURN_SYNC = SwapTarget(
    "post-turn-sync",
    "the post-turn memory sync (syncPendingMemoryCommitsAfterTurn, 0.30.28 and later)",
    POST_TURN_SYNC_MODULES,
    (
        Forwarded(
            "syncPendingMemoryCommitsAfterTurn",
            "memory_reminder",
            "memoryDir: `options.memoryDir`, else upstream's `getScopedMemoryFilesystemRoot(agentId)`",
            "`{status: syncStatus, summary: syncSummary, memoryDir, localOnly}` (`localOnly` from upstream's "
            "backend); with a backend that is not local-only, only `conflict`, `dirty` and `skipped` (not "
            "initialized) stand, any other answer is not applicable",
        ),
    ),
    _named_reasons(POST_TURN_SYNC_MODULES, ("syncPendingMemoryCommitsAfterTurn",), "the post-turn memory sync"),
    post_turn_sync_shim,
    POST_TURN_SYNC_SHIM_TEMPLATE,
)
#: the swap targets, in the order their shims are tried (the compiler first)
TARGETS: tuple[SwapTarget, ...] = (COMPILER, PRE_COMMIT_HOOK, MEMORY_TOOL, POST_TURN_SYNC)
#: every forwarded export of every target
FORWARDED = tuple(name for target in TARGETS for name in target.forwarded)


def target_named(name: str) -> SwapTarget:
    found = next((t for t in TARGETS if t.name == name), None)
    if found is None:
        raise KeyError(f"no swap target {name!r} (the targets: {', '.join(t.name for t in TARGETS)})")
    return found


def selection_reasons(
    source: str,
    importer: str,
    aliases: list[tuple[str, str]],
    paths: set[str],
    targets: tuple[SwapTarget, ...] = TARGETS,
) -> list[str]:
    """Why a test file is selected (empty: it is not), over every target."""
    found = imports_of(source, importer, aliases, paths)
    return [reason for target in targets for reason in target.reasons(found)]


def select_tests(root: Path, paths: set[str], targets: tuple[SwapTarget, ...] = TARGETS) -> list[SelectedFile]:
    """The selected test files of a source tree (each target's rule), in path order, each with its targets."""
    aliases = path_aliases(_read(root / "tsconfig.json"))
    selected = []
    for path in sorted(p for p in paths if is_test_file(p)):
        source = (_read(root / path) or b"").decode("utf-8", "replace")
        found = imports_of(source, path, aliases, paths)
        reasons: list[str] = []
        chosen: list[str] = []
        names: list[str] = []
        for target in targets:
            given = target.reasons(found)
            if given:
                reasons.extend(given)
                chosen.append(target.name)
                names.extend(n for n in found.names_from(target.modules) if n not in names)
        if reasons:
            selected.append(SelectedFile(path, reasons, names, chosen))
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


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
