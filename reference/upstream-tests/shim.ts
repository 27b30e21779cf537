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
// The calls are synchronous, as upstream's are: one JSON line is written to the bridge's request FIFO
// ($CONFORMANCE_UPSTREAM_REQUESTS) and one answer line read from its answer FIFO
// ($CONFORMANCE_UPSTREAM_ANSWERS), with blocking reads. The bridge (harness/tools/upstream/bridge.py) holds
// the implementation's process for the whole run; each request names the revision's profile
// ($CONFORMANCE_UPSTREAM_PROFILE). Every
// call, with its request, answer and call site, is appended to $CONFORMANCE_UPSTREAM_LOG, which
// reference/upstream-tests/preload.ts marks at the start of each test.
//
// An answer `thrown` is thrown again (as the named error class when there is one); `unsupported` throws
// `conformance: not applicable: ...`; an error answer throws `conformance: the implementation under test
// failed: ...`. JSON has no `undefined`: a record without `memfsRevision` gets the key, undefined, as
// upstream's object literal has it.

import { appendFileSync, openSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
// @conformance-default-memory-dir

export * from "./__CONFORMANCE_UPSTREAM__";

type Answer = Record<string, any>;

const REQUESTS = process.env.CONFORMANCE_UPSTREAM_REQUESTS;
const ANSWERS = process.env.CONFORMANCE_UPSTREAM_ANSWERS;
const LOG = process.env.CONFORMANCE_UPSTREAM_LOG;
const PROFILE = process.env.CONFORMANCE_UPSTREAM_PROFILE; // the revision's profile, sent with every request
const HASH_ONLY_NOW = "2026-01-01T00:00:00.000Z";

let channel: { write: number; read: number } | undefined;
let pending = Buffer.alloc(0);

function exchange(request: Record<string, unknown>): Answer {
  if (!REQUESTS || !ANSWERS) {
    throw new Error("conformance shim: no bridge (CONFORMANCE_UPSTREAM_REQUESTS / _ANSWERS are not set)");
  }
  if (!channel) channel = { write: openSync(REQUESTS, "w"), read: openSync(ANSWERS, "r") };
  const line = Buffer.from(`${JSON.stringify(request)}\n`, "utf8");
  for (let written = 0; written < line.length; ) {
    written += writeSync(channel.write, line, written, line.length - written);
  }
  const chunk = Buffer.alloc(1 << 16);
  for (;;) {
    const end = pending.indexOf(10);
    if (end >= 0) {
      const answer = pending.subarray(0, end).toString("utf8");
      pending = pending.subarray(end + 1);
      return JSON.parse(answer);
    }
    const read = readSync(channel.read, chunk, 0, chunk.length, null);
    if (read === 0) throw new Error("conformance shim: the bridge closed its answers");
    pending = Buffer.concat([pending, chunk.subarray(0, read)]);
  }
}

function callSite(): string | undefined {
  const frames = (new Error().stack ?? "").split("\n").slice(1);
  const frame = frames.find((f) => /\.(test|spec)\.[cm]?[jt]sx?:\d+/.test(f) || /_(test|spec)\.[cm]?[jt]sx?:\d+/.test(f));
  const found = frame?.match(/\(?([^\s()]+:\d+:\d+)\)?\s*$/);
  return found ? relative(process.cwd(), found[1]) : undefined;
}

function log(entry: Record<string, unknown>): void {
  if (LOG) appendFileSync(LOG, `${JSON.stringify(entry)}\n`);
}

function notApplicable(call: string, what: string, request?: Record<string, unknown>): never {
  log({ call, site: callSite(), request, notApplicable: what });
  throw new Error(`conformance: not applicable: ${what}`);
}

function ask(call: string, request: Record<string, unknown>): Answer {
  if (PROFILE) request.profile = PROFILE;
  const site = callSite();
  let answer: Answer;
  try {
    answer = exchange(request);
  } catch (error) {
    log({ call, site, request, bridgeError: String(error) });
    throw error;
  }
  log({ call, site, request, answer });
  if (answer.ok === false && typeof answer.unsupported === "string") {
    throw new Error(`conformance: not applicable: ${answer.unsupported}`);
  }
  if (answer.ok !== true) {
    throw new Error(`conformance: the implementation under test failed: ${answer.error ?? JSON.stringify(answer)}`);
  }
  if (typeof answer.thrown === "string") {
    const [name, ...rest] = answer.thrown.split(": ");
    const kind = (globalThis as Record<string, unknown>)[name ?? ""];
    const message = rest.length ? rest.join(": ") : answer.thrown;
    throw typeof kind === "function" && /Error$/.test(name ?? "")
      ? new (kind as ErrorConstructor)(message)
      : new Error(answer.thrown);
  }
  return answer;
}

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
