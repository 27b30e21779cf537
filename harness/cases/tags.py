"""The tag vocabulary: every tag a case may carry, and what the cases with it exercise.

The loader refuses any other tag (with the nearest known one as the fix); docs/cases.md points here.
"""

from __future__ import annotations

TAGS: dict[str, str] = {
    "basic": "ordinary memory layouts; the three sections and their order",
    "persona": "`system/persona.md` as `<self>`: alone, with frontmatter, empty, look-alikes",
    "system-tree": "the nested `system/**` tag tree: depths, file + directory with one label, values",
    "external-projection": "the box-drawing `<external_projection>` tree: depth, siblings, directories first",
    "skills": "`skills/` exclusion at any depth, and names that only look like it",
    "memory-index": "`MEMORY.md` files, which v1 treats as ordinary files",
    "frontmatter": "every frontmatter form: none, empty, unclosed, at EOF, keys, lists, quoting, indentation",
    "block-scalar": "`description: \\|`, `>`, chomping indicators, indentation (0.32.14+)",
    "encoding": "invalid UTF-8, NUL, UTF-16, non-ASCII text and the U+FFFD decoding",
    "bom": "byte-order marks: one stripped, two kept, with CRLF",
    "newlines": "CRLF, CR and mixed line ends in frontmatter and body",
    "whitespace": "Unicode whitespace (U+00A0, U+2028, U+3000, U+FEFF, U+0085, U+001C..U+001F) at the ends of text",
    "trim": "where upstream trims (JS `trim`/`trimEnd`, listed paths) and where it does not",
    "names": "odd file names: spaces, dots, case, extensions, `.md` directories, XML characters",
    "quoting": 'names git C-quotes (non-ASCII, control characters, `"`, `\\`), and unescaped XML in output',
    "collation": "ICU `localeCompare` order: punctuation, digits, case, integer-like keys",
    "icu-collation": "non-ASCII `localeCompare` order as bun's ICU 78.3 (Unicode 17) has it, where UCA 9 differs: Han "
    "radical-stroke, characters after Unicode 9, noncharacters, numeric symbols (skills, labels, memfs-v2 names)",
    "prototype": "`__proto__`, `constructor`, `__value__` and other names that hit the plain-object tree",
    "history": "several commits: renames, deletions, re-adds, type changes",
    "merge": "commits with `parents`: a merge commit as HEAD, a second root commit",
    "rewrite": "HEAD moved back (`reset`) or rewritten (`amend`) mid-conversation: a revision that is no descendant",
    "broken-head": "HEAD made unresolvable mid-conversation (`break_head`): an unborn branch, a missing commit, an "
    "empty HEAD file",
    "worktree": "uncommitted, untracked and staged changes: those that must not matter, and `HEAD:<path>` files "
    "that do",
    "revision": "`git show HEAD:<path>` as a revision argument: `..`, `^-`, `./`, globs as pathspecs, `HEAD:` files, "
    "NAME_MAX",
    "builtins": "`system/**` paths that reach built-ins through Object.prototype's members: read-only `name`/`length`, "
    "numbers, Number.prototype, Function.prototype, `arguments`/`caller`",
    "jsdate": "the clock as `new Date(string)` reads it: roll-overs, hour 24, Invalid Dates, years 0 and 10000",
    "jsnumber": "`previousMessageCount` as a JS number: 2^53+1, 10^21, past the largest double",
    "js-string": "a case's text as JavaScript strings: surrogate-pair escapes (`\\ud83e\\udd80`) are one character as "
    "JSON.parse reads them, lone surrogates stay (harness.cases.inputs.js_string)",
    "empty": "empty files, whitespace-only files, repositories with nothing to render",
    "no-repo": "unborn, not-a-repository and missing memory directories",
    "subdir": "a memory directory inside a larger repository (`memory_subdir`)",
    "shape": "repository shapes (`layout`, `object_format`, `head`, `config`, gitlinks, `listing`, `missing_objects`): "
    "bare, a .git directory, a separate git directory, core.bare, SHA-256, tag and tree HEADs, exact listing sizes, "
    "lost objects",
    "gitlink": "submodule entries (mode 160000) in HEAD's tree: the commit present in the repository or missing",
    "git-config": "the repository's own configuration (`config`): core.quotePath, color.ui, log.decorate, core.bare",
    "symlink": "committed symlinks: to files, to directories, dangling",
    "size": "the 1 MiB `execFileSync` limit on a file and on the whole listing",
    "scale": "generated repositories with hundreds or thousands of files",
    "replace-patterns": "`$&`, `$$`, `` $` ``, `$'` in memory text, expanded by `String.replaceAll`",
    "core-memory": "the `{CORE_MEMORY}` placeholder: absent, twice, adjacent, near misses, in memory text",
    "inputs": "cases that change the compile inputs: ids, clock, message count, `include_memfs`, system prompt",
    "memfs-v2": "a committed root `MEMORY.md` (0.33.3+): detection, what is read, root blocks, child indexes, "
    "escaping, v1/v2 switches (docs/profiles.md lists each rule with its cases)",
    "available-skills": "the turn's `<available_skills>` block from `client_skills`",
    "agent-free": "agent-free conversations (0.33.6+)",
    "product-difference": "a known difference between the Letta server and letta-code (docs/products.md)",
    "snapshot": "written by `conformance add-case` from a real repository",
    "reduced": "written by `conformance reduce`",
    "fuzz": "found by `conformance fuzz` (its seed is in the description)",
    "clock": "moving the pinned clock between steps",
    "compaction": "compaction of a conversation and the full compile after it",
    "conversation": "new conversations of the same agent and what they compile",
    "golden": "expected values quoted from the spec, checked on the Python port alone",
    "lifecycle": "lifecycle probes (cases/lifecycle/): a conversation replayed turn by turn",
    "op": "op cases (cases/ops/): one request of a protocol op on the case's repository",
    "commit-validation": "which staged changes upstream's pre-commit hook accepts (the `validate` op): refusals, "
    "bash edges, v2 rules, layout policies, tree constraints",
    "memory-view": "the Memory tool's view (op memory_view, 0.34.7+): order, limit, descriptions, clamping, refusals",
    "memory-write": "the memory write tool (before 0.33.3): create, str_replace, insert, delete, rename, "
    "update_description, the file it writes, the commit it makes and the message or error the model gets",
    "reminder": "the post-turn memory reminders (`memory_reminder`): uncommitted changes counted, a merge or rebase "
    "stopped on its conflicts, a clean repository; on lifecycle turns, the client loop's reminders (agent-info, "
    "the sync's reminder on the next turn)",
    "memory-update": "the `<memory_update>` block: when it is sent, to which model, and for how many turns",
    "model": "changing the agent's model handle",
    "persisted-reminder": "the spec's persisted-reminder delivery (chapter 9.5), Python port only",
    "recompile": "explicit recompiles of a conversation's system prompt",
    "spec": "the spec's own examples (chapter 8 and 9)",
    "spec-v2": "the spec's memfs-v2 example (root MEMORY.md)",
    "system-prompt": "editing the agent's raw system prompt mid-conversation",
}
