// letta-conformance upstream-tests shim (reference/upstream-tests/shim.ts; docs/upstream-tests.md).
//
// Written by `conformance upstream-tests` over an upstream revision's compiler module, in a source tree in
// the harness's cache (never in the user's clone). The compiler itself moves beside it
// (`<name>.conformance-upstream.ts`); everything it exports is re-exported below (`export *`), except the
// functions defined here, which forward each call to the implementation under test through the JSON-lines
// protocol (docs/protocol.md):
//
//   compileLocalSystemPrompt(options)               -> compile        (record)
//   hashRawSystemPrompt(system)                     -> compile        (record.rawSystemHash; no memory)
//   getCommittedMemfsRevision(memoryDir)            -> compile        (record.memfsRevision)
//   compileAvailableSkillsBlock(skills)             -> skills_block   (block)
//   appendAvailableSkillsBlock(prompt, skills)      -> skills_block   (appended)
//
// The calls go through the bridge (reference/upstream-tests/bridge-client.ts, put before this text when the
// shim is written: `ask`, `notApplicable`). JSON has no `undefined`: a record without `memfsRevision` gets
// the key, undefined, as upstream's object literal has it.

import { tmpdir } from "node:os";
import { join } from "node:path";
// @conformance-default-memory-dir

export * from "./__CONFORMANCE_UPSTREAM__";

const HASH_ONLY_NOW = "2026-01-01T00:00:00.000Z";

function dateText(now: unknown): string {
  if (now === undefined || now === null) return new Date().toISOString();
  const date = now instanceof Date ? now : new Date(now as string);
  return Number.isNaN(date.getTime()) ? "Invalid Date" : date.toISOString();
}

function recordOf(answer: Answer): any {
  const record = { ...(answer.record ?? {}) };
  if (!("memfsRevision" in record)) record.memfsRevision = undefined;
  return record;
}

export function compileLocalSystemPrompt(options: any): any {
  const agent = options?.agent ?? {};
  let memoryDir = options?.memoryDir;
  if (memoryDir === undefined) {
    if (typeof conformanceDefaultMemoryDir !== "function") {
      notApplicable("compileLocalSystemPrompt", "memoryDir left to upstream's default, which the shim could not find");
    }
    memoryDir = conformanceDefaultMemoryDir(agent.id);
  }
  const request: Record<string, unknown> = {
    op: "compile",
    memoryDir,
    system: agent.system,
    agentId: agent.id,
    conversationId: options?.conversationId,
    now: dateText(options?.now),
  };
  if (options?.previousMessageCount !== undefined) request.previousMessageCount = options.previousMessageCount;
  if (options?.includeMemfs !== undefined) request.includeMemfs = options.includeMemfs;
  return recordOf(ask("compileLocalSystemPrompt", request));
}

export function hashRawSystemPrompt(systemPrompt: string): string {
  const request = {
    op: "compile",
    memoryDir: join(tmpdir(), ".conformance-no-memory-dir"),
    system: systemPrompt,
    agentId: "conformance-hash",
    conversationId: "conformance-hash",
    now: HASH_ONLY_NOW,
    includeMemfs: false,
  };
  return ask("hashRawSystemPrompt", request).record?.rawSystemHash;
}

export function getCommittedMemfsRevision(memoryDir: string): string | undefined {
  const request = {
    op: "compile",
    memoryDir,
    system: "",
    agentId: "conformance-revision",
    conversationId: "conformance-revision",
    now: HASH_ONLY_NOW,
    includeMemfs: true,
  };
  return recordOf(ask("getCommittedMemfsRevision", request)).memfsRevision;
}

export function compileAvailableSkillsBlock(clientSkills: unknown[] = []): string {
  return ask("compileAvailableSkillsBlock", { op: "skills_block", systemPrompt: "", clientSkills }).block;
}

export function appendAvailableSkillsBlock(systemPrompt: string, clientSkills: unknown[] = []): string {
  return ask("appendAvailableSkillsBlock", { op: "skills_block", systemPrompt, clientSkills }).appended;
}
