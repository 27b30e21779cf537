#!/usr/bin/env node
// A minimal protocol adapter in JavaScript: your memory compiler under letta-conformance (docs/porting.md).
//
//     conformance run --impl "cmd:node adapter.mjs"
//
// It owns the protocol (docs/protocol.md: JSON lines on stdin and stdout, `hello`, `compile`, `unsupported`
// for the rest) and every field of the record that is computed from the request rather than from the
// memory: `content` (the core memory put into the raw system prompt), `compiledAt`, `rawSystemHash`,
// `memfsRevision`. The memory itself, `coreMemory`, comes from `yourCoreMemory`: the one function you
// replace with a call into your own compiler.
//
// Until you do, `yourCoreMemory` stands in with letta-conformance's own Python port, run once per compile
// as `PYTHON -m memfs_prompt compile DIR --json` (PYTHON: the first argument, default `python3`; it must
// import memfs_prompt, as the Python the suite is installed in does), so this file passes real cases as it
// is; the suite's tests run it that way against the real letta-code release. Node 20+, no dependencies.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";

const PROFILE = "letta-code@0.34.7"; // letta-code 0.34.7 to 0.34.12 (docs/porting.md, "Which profile to claim")
const NAME = "my-port"; // your implementation's name: an expectations file may name it (`name: my-port`)
const FEATURES = ["memfs-v1", "memfs-v2", "metadata-block"]; // the layout features served (no client-skills, ...)
const PLACEHOLDER = "{CORE_MEMORY}";
const STAND_IN_PYTHON = process.argv[2] ?? "python3";

/** Throw it where letta-code throws for the same input: answered `thrown` (the message is not compared). */
class UpstreamThrows extends Error {}

/** An input this adapter does not serve: answered `unsupported`, so the case is not applicable. */
class Unsupported extends Error {}

/**
 * REPLACE THIS with your compiler: the memory sections of upstream's record (`coreMemory`), read from the
 * committed HEAD of `memoryDir`. Throw UpstreamThrows where letta-code throws.
 */
function yourCoreMemory(memoryDir, { agentId, conversationId, now, previousMessageCount, includeMemfs }) {
  // The stand-in: letta-conformance's port on its command line. An argument cannot hold a lone surrogate or NUL.
  for (const value of [agentId, conversationId]) {
    if (!value.isWellFormed() || value.includes("\0")) throw new Unsupported("an id the stand-in cannot pass");
  }
  const argv = ["-m", "memfs_prompt", "compile", memoryDir, "--json", `--profile=${PROFILE}`,
    `--agent-id=${agentId}`, `--conversation-id=${conversationId}`, `--now=${now}`,
    `--previous-message-count=${String(previousMessageCount)}`, ...(includeMemfs ? [] : ["--no-memfs"])];
  try {
    const printed = execFileSync(STAND_IN_PYTHON, argv, {
      encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30,
    });
    return JSON.parse(printed).coreMemory;
  } catch (error) {
    const said = String(error.stderr ?? "");
    if (error.status === 1 && said.startsWith("upstream throws: ")) {
      throw new UpstreamThrows(said.slice("upstream throws: ".length).trim());
    }
    throw new Error(`the stand-in failed: ${said.trim() || error.message}`);
  }
}

// --- the computed fields: keep these when you replace the stand-in -----------------------------------------

/** `new Date(now).toISOString()`; an Invalid Date throws, as it does upstream. */
function compiledAt(now) {
  const date = new Date(now);
  if (Number.isNaN(date.getTime())) throw new UpstreamThrows("RangeError: Invalid Date");
  return date.toISOString();
}

/** sha256 of the request's `system` as node:crypto encodes a string: UTF-8, a lone surrogate as U+FFFD. */
function rawSystemHash(system) {
  return createHash("sha256").update(system).digest("hex");
}

/** `git rev-parse --verify HEAD` in the memory directory, trimmed; undefined (the key left out) when it fails. */
function memfsRevision(memoryDir) {
  try {
    const printed = execFileSync("git", ["rev-parse", "--verify", "HEAD"], {
      cwd: memoryDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"],
    });
    return printed.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Every `{CORE_MEMORY}` replaced (`replaceAll`: `$&` and friends expand); without one, appended after trimEnd(). */
function content(system, coreMemory) {
  const prompt = system.includes(PLACEHOLDER) ? system : `${system.trimEnd()}\n\n${PLACEHOLDER}`;
  return prompt.replaceAll(PLACEHOLDER, coreMemory);
}

// --- the protocol -----------------------------------------------------------------------------------------

function compileAnswer(request) {
  if (request.profile != null && request.profile !== PROFILE) {
    throw new Unsupported(`profile ${JSON.stringify(request.profile)}`);
  }
  if ("clientSkills" in request) throw new Unsupported('input "clientSkills"'); // or add systemPromptWithSkills
  const { memoryDir, system, now } = request;
  const includeMemfs = request.includeMemfs !== false;
  let coreMemory, stamp;
  try {
    coreMemory = yourCoreMemory(memoryDir, {
      agentId: request.agentId, conversationId: request.conversationId, now,
      previousMessageCount: request.previousMessageCount ?? 0, includeMemfs,
    });
    stamp = compiledAt(now); // after rendering, as upstream
  } catch (error) {
    if (error instanceof UpstreamThrows) return { thrown: error.message };
    throw error;
  }
  const record = { content: content(system, coreMemory), coreMemory, compiledAt: stamp,
    rawSystemHash: rawSystemHash(system) };
  const revision = includeMemfs ? memfsRevision(memoryDir) : undefined;
  if (revision !== undefined) record.memfsRevision = revision;
  return { record };
}

function answer(request) {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return { id: null, ok: false, error: "request is not a JSON object" };
  }
  const id = request.id ?? null;
  try {
    if (request.op === "hello") {
      return { id, ok: true, protocol: 1,
        capabilities: { ops: ["hello", "compile"], lifecycle: false, profiles: [PROFILE], features: FEATURES },
        info: { implementation: NAME, node: process.version } };
    }
    if (request.op === "compile") return { id, ok: true, ...compileAnswer(request) };
    throw new Unsupported(`op ${JSON.stringify(request.op)}`);
  } catch (error) {
    if (error instanceof Unsupported) return { id, ok: false, unsupported: error.message };
    return { id, ok: false, error: `${error.name}: ${error.message}` }; // a bug: an error of the case, never `thrown`
  }
}

// Lines end at "\n" only (JSON text may hold U+2028 and other characters a line reader would split on).
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (let end = pending.indexOf(10); end !== -1; end = pending.indexOf(10)) {
    const text = pending.subarray(0, end).toString("utf8");
    pending = pending.subarray(end + 1);
    if (!text.trim()) continue;
    let reply;
    try {
      reply = answer(JSON.parse(text));
    } catch (error) {
      reply = { id: null, ok: false, error: `request is not JSON: ${error.message}` };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`); // JSON.stringify writes a lone surrogate as \udXXX
  }
});
