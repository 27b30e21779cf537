// letta-conformance upstream-tests shim of the memory tool (reference/upstream-tests/memory-tool-shim.ts;
// docs/upstream-tests.md).
//
// Written by `conformance upstream-tests` over an upstream revision's memory tool module
// (src/tools/impl/Memory.ts in 0.25.x, src/tools/impl/memory.ts from 0.30.28), in a source tree in the
// harness's cache (never in the user's clone). The module itself moves beside it
// (`<name>.conformance-upstream.ts`); everything it exports is re-exported below (`export *`), except:
//
//   memory(args)   -> memory_write {memoryDir, command, args, agentId, agentName, syncMode}   (written -> {message})
//
// What upstream's tool finds before it touches git is found here with upstream's own code, as the tool finds
// it: the memory directory (`resolveScopedMemoryDir()` of the module the tool imports it from: the runtime
// context's agent, else MEMORY_DIR, else AGENT_ID), the agent (the runtime context's id, else AGENT_ID /
// LETTA_AGENT_ID; its name from the backend's `retrieveAgent`, else AGENT_NAME) and the backend's sync mode
// (`getBackend().capabilities.localMemfs`: `syncMode` local, else remote, as the tool's getMemoryWriteSyncMode
// decides). Everything after (the arguments' checks, the write, the commit, the sync) is the implementation's,
// and its answer is used as it is (`written` is the message, `thrown` is thrown): upstream's tests run with the
// API backend, a remote MemFS, so their writes are remote ones (0.30.28 to 0.33.2 commit and leave the push to
// the harness after the turn). Where the implementation does not model the remote sync (0.25.x pushes and
// replays) it answers `unsupported`, and the test is not applicable.
// The calls go through the bridge (reference/upstream-tests/bridge-client.ts, put after this text when the
// shim is written: `ask`, `notApplicable`).

// @conformance-memory-imports

export * from "./__CONFORMANCE_UPSTREAM__";

const CONFORMANCE_MISSING: string | null = __CONFORMANCE_MISSING__;

async function conformanceBackend(): Promise<any> {
  const { getBackend } = await import(__CONFORMANCE_BACKEND__);
  return getBackend();
}

export async function memory(args: any): Promise<{ message: string }> {
  if (CONFORMANCE_MISSING !== null) notApplicable("memory", CONFORMANCE_MISSING);
  const memoryDir = conformanceScopedMemoryDir();
  if (!memoryDir) {
    notApplicable("memory", "upstream's tool finds no memory directory (resolveScopedMemoryDir), which memory_write needs");
  }
  const envAgentId = (process.env.AGENT_ID || process.env.LETTA_AGENT_ID || "").trim();
  let contextAgentId = "";
  try {
    contextAgentId = conformanceCurrentAgentId().trim();
  } catch {
    // no runtime context: upstream falls back to the environment too
  }
  const agentId = contextAgentId || envAgentId;
  if (!agentId) notApplicable("memory", "upstream's tool finds no agent id (its runtime context, AGENT_ID)");
  let backend: any;
  try {
    backend = await conformanceBackend();
  } catch (error) {
    notApplicable("memory", `upstream's backend is unavailable: ${String(error)}`);
  }
  let agentName = "";
  try {
    const agent = await backend.retrieveAgent(agentId);
    agentName = (agent?.name || "").trim();
  } catch {
    // upstream keeps its fallback below
  }
  if (!agentName) agentName = (process.env.AGENT_NAME || "").trim();
  const command = args?.command;
  if (typeof command !== "string") {
    notApplicable("memory", "the call names no command (a string), which memory_write needs");
  }
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args ?? {})) if (key !== "command") rest[key] = value;
  const request = {
    op: "memory_write",
    memoryDir,
    command,
    args: rest,
    agentId,
    agentName: agentName && agentName !== agentId ? agentName : null,
    syncMode: backend?.capabilities?.localMemfs ? "local" : "remote",
  };
  const answer = ask("memory", request);
  return { message: answer.written };
}
