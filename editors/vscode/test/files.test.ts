// The ACP client's fs/read_text_file and fs/write_text_file against the real
// `hearth acp` + `hearth sim`: a client given `files` advertises both and the
// daemon's tools go through it; its failures reach the model as the daemon
// decides (a read falls back to the disk with a note, a write fails).
import type * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";

import { HearthClient, type FileAccess } from "../src/acp/client.js";
import { hearthBinary, isolatedEnv, simCall, startSim, stopDaemonOf, within, type Env, type Sim } from "./helpers.js";

/** In-memory documents; `fail` makes the next calls throw it. */
class Documents implements FileAccess {
  readonly docs = new Map<string, string>();
  readonly calls: string[] = [];
  fail?: Error;
  async readTextFile(p: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
    this.calls.push(`read ${p.path}`);
    if (this.fail) throw this.fail;
    const text = this.docs.get(p.path);
    if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${p.path}'`), { code: "ENOENT" });
    return { content: text };
  }
  async writeTextFile(p: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
    this.calls.push(`write ${p.path}`);
    if (this.fail) throw this.fail;
    this.docs.set(p.path, p.content);
    return {};
  }
}

describe("fs requests through the client's documents (hearth acp + hearth sim)", () => {
  let bin: string;
  let sim: Sim;
  let env: Env;
  let client: HearthClient;
  let files: Documents;
  let updates: acp.SessionNotification[];

  before(async () => {
    bin = hearthBinary();
    sim = await startSim(bin);
    env = isolatedEnv(sim);
    files = new Documents();
    client = new HearthClient({ path: bin, env: env.env, cwd: env.workspace, files });
    client.on("update", (n) => updates.push(n));
  });

  beforeEach(() => {
    updates = [];
    files.fail = undefined;
    files.calls.length = 0;
    writeFileSync(path.join(env.workspace, "a.txt"), "on disk\n");
  });

  after(async () => {
    client?.dispose();
    if (bin && env) await stopDaemonOf(bin, env);
    await sim?.stop();
    env?.cleanup();
  });

  /** The text of the last completed tool call's output. */
  function toolOutput(sessionId: string): string {
    const last = updates
      .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "tool_call_update")
      .map((n) => n.update as acp.ToolCallUpdate)
      .filter((u) => u.status === "completed" || u.status === "failed")
      .at(-1);
    assert.ok(last, "a finished tool call");
    return (last.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");
  }

  async function autoEditSession(): Promise<string> {
    const s = await client.newSession(env.workspace);
    await client.setMode(s.sessionId, "auto-edit");
    return s.sessionId;
  }

  test("reads and writes go to the documents; the disk is untouched", async () => {
    const id = await autoEditSession();
    const root = (await client.status()).workspaces?.[0]?.root ?? env.workspace;
    const a = path.join(root, "a.txt");
    files.docs.set(a, "in the editor\n");
    await within(client.prompt(id, simCall("read_file", { path: "a.txt" })), 20_000, "the read");
    assert.match(toolOutput(id), /1\tin the editor/);
    await within(client.prompt(id, simCall("edit_file", { path: "a.txt", old_string: "in the", new_string: "edited in the" })), 20_000, "the edit");
    assert.match(toolOutput(id), /unsaved/);
    assert.equal(files.docs.get(a), "edited in the editor\n");
    assert.equal(readFileSync(path.join(env.workspace, "a.txt"), "utf8"), "on disk\n");
    assert.deepEqual(files.calls, [`read ${a}`, `read ${a}`, `read ${a}`, `write ${a}`]);
  });

  test("a failing client: the read falls back to the disk with a note, the write is a tool error", async () => {
    const id = await autoEditSession();
    files.fail = new Error("the document is locked");
    await within(client.prompt(id, simCall("read_file", { path: "a.txt" })), 20_000, "the read");
    const read = toolOutput(id);
    assert.match(read, /1\ton disk/);
    assert.match(read, /the editor could not give its copy of a\.txt .*the document is locked/);
    await within(client.prompt(id, simCall("write_file", { path: "a.txt", content: "new\n" })), 20_000, "the write");
    assert.match(toolOutput(id), /could not give its copy of the file .*the document is locked.*nothing was changed/);
    assert.equal(readFileSync(path.join(env.workspace, "a.txt"), "utf8"), "on disk\n");
  });
});
