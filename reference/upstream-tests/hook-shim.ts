// letta-conformance upstream-tests shim of the pre-commit hook (reference/upstream-tests/hook-shim.ts;
// docs/upstream-tests.md).
//
// Written by `conformance upstream-tests` over an upstream revision's module of PRE_COMMIT_HOOK_SCRIPT
// (src/agent/memoryGit.ts in 0.25.x, src/agent/memory-git-hooks.ts later), in a source tree in the harness's
// cache (never in the user's clone). The module itself moves beside it (`<name>.conformance-upstream.ts`);
// everything it exports is re-exported below (`export *`), except PRE_COMMIT_HOOK_SCRIPT:
//
//   PRE_COMMIT_HOOK_SCRIPT   -> validate   (validation.messages to stderr; exit 0 when accepted, else 1)
//
// Upstream's tests write the constant into a repository's .git/hooks/pre-commit and run `git commit`, so the
// hook runs in git's child process while bun waits in execSync: it cannot use the shim's FIFO bridge. The
// script runs harness/tools/upstream/hook_client.py with the harness's Python and a configuration the bridge
// wrote (the implementation's command and environment, the revision's profile); the client starts the
// implementation, asks `hello` and `validate` with memoryDir the repository's top (where git runs hooks),
// prints the messages and exits. An `unsupported` answer exits 1 with `conformance: not applicable: ...`, an
// error `conformance: the implementation under test failed: ...`. It appends each call to
// $CONFORMANCE_UPSTREAM_LOG (inherited through git from the test's environment), so the report attributes it
// to the test that committed. The command is filled in when the shim is placed (absolute paths).

export * from "./__CONFORMANCE_UPSTREAM__";

export const PRE_COMMIT_HOOK_SCRIPT: string = __CONFORMANCE_HOOK_COMMAND__;
