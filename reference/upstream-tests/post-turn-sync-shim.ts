// letta-conformance upstream-tests shim of the post-turn memory sync
// (reference/upstream-tests/post-turn-sync-shim.ts; docs/upstream-tests.md).
//
// Written by `conformance upstream-tests` over an upstream revision's src/agent/memory-git.ts (0.30.28 and
// later), in a source tree in the harness's cache (never in the user's clone). The module itself moves beside
// it (`<name>.conformance-upstream.ts`); everything it exports is re-exported below (`export *`), except:
//
//   syncPendingMemoryCommitsAfterTurn(agentId, {memoryDir})
//       -> memory_reminder {memoryDir}   ({status: syncStatus, summary: syncSummary, memoryDir, localOnly})
//
// memoryDir is upstream's: `options.memoryDir ?? getScopedMemoryFilesystemRoot(agentId)` (the function the
// module imports), and `localOnly` is upstream's test of the backend (`getBackend().capabilities`: localMemfs
// and not remoteMemfs). memory_reminder is the sync of a local-only backend (nothing pushed), so:
// - with a local-only backend, the answer is used as it is;
// - with any other backend, upstream's function decides `skipped` (repository not initialized), `conflict`
//   and `dirty` before it looks at the backend's remote, so those answers stand; any other answer (the local
//   backend's `skipped` where upstream would push, find the repository clean or say the backend has no remote
//   pushes) is not applicable.
// A `thrown` answer is thrown. The calls go through the bridge (reference/upstream-tests/bridge-client.ts, put
// after this text when the shim is written: `ask`, `notApplicable`).

// @conformance-sync-imports

export * from "./__CONFORMANCE_UPSTREAM__";

const CONFORMANCE_SYNC_MISSING: string | null = __CONFORMANCE_MISSING__;
const CONFORMANCE_NOT_INITIALIZED = "Memory repo is not initialized.";

export async function syncPendingMemoryCommitsAfterTurn(
  agentId: string,
  options: { memoryDir?: string } = {},
): Promise<any> {
  const call = "syncPendingMemoryCommitsAfterTurn";
  if (CONFORMANCE_SYNC_MISSING !== null) notApplicable(call, CONFORMANCE_SYNC_MISSING);
  const { getBackend } = await import(__CONFORMANCE_BACKEND__);
  const backend = getBackend();
  const localOnly = Boolean(backend.capabilities.localMemfs && !backend.capabilities.remoteMemfs);
  const memoryDir = options.memoryDir ?? conformanceScopedMemoryRoot(agentId);
  const request = { op: "memory_reminder", memoryDir };
  const answer = ask(call, request);
  const status = answer.syncStatus;
  const summary = answer.syncSummary;
  const beforeRemote =
    status === "conflict" || status === "dirty" || (status === "skipped" && summary === CONFORMANCE_NOT_INITIALIZED);
  if (!localOnly && !beforeRemote) {
    notApplicable(
      call,
      "the backend is not local-only (capabilities: localMemfs and not remoteMemfs): past the repository's state " +
        `upstream's sync is that backend's (a push, a clean repository, no remote pushes), and memory_reminder is ` +
        `the local-only backend's (it answered ${status})`,
      request,
    );
  }
  return { status, summary, memoryDir, localOnly };
}
