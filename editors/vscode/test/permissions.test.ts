// Permissions, modes and diffs of the ACP client layer against the real
// `hearth acp` + `hearth sim`: the simulator calls write_file / edit_file /
// shell when the prompt says so, and the daemon asks this client before any of
// them runs (mode "ask"), runs them by mode, and reports edits as ACP diffs.
import type * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";

import { HearthClient } from "../src/acp/client.js";
import { HearthGoneError, HearthRpcError } from "../src/acp/errors.js";
import { hearthBinary, isolatedEnv, simCall, startSim, stopDaemonOf, within, type Env, type Sim } from "./helpers.js";

type Answer = (req: acp.RequestPermissionRequest, signal: AbortSignal) => Promise<acp.RequestPermissionOutcome>;

const ORIGINAL_A = "hello from a.txt\n";
const OPTION_KINDS = ["allow_once", "allow_always", "reject_once", "reject_always"];

describe("permissions, modes and diffs (hearth acp + hearth sim)", () => {
  let bin: string;
  let sim: Sim;
  let env: Env;
  let client: HearthClient;
  /** This test's answer to permission requests; unset = the test expects none. */
  let answer: Answer | undefined;
  /** Every permission request of this test, in order. */
  let asked: acp.RequestPermissionRequest[];
  let updates: acp.SessionNotification[];

  before(async () => {
    bin = hearthBinary();
    sim = await startSim(bin);
    env = isolatedEnv(sim);
    client = new HearthClient({
      path: bin,
      env: env.env,
      cwd: env.workspace,
      onPermission: (req, signal) => {
        asked.push(req);
        if (!answer) return Promise.reject(new Error(`unexpected permission request: ${JSON.stringify(req.toolCall)}`));
        return answer(req, signal);
      },
    });
    client.on("update", (n) => updates.push(n));
  });

  beforeEach(() => {
    answer = undefined;
    asked = [];
    updates = [];
    writeFileSync(path.join(env.workspace, "a.txt"), ORIGINAL_A);
  });

  after(async () => {
    client?.dispose();
    if (bin && env) await stopDaemonOf(bin, env);
    await sim?.stop();
    env?.cleanup();
  });

  const ws = (rel: string) => path.join(env.workspace, rel);
  const read = (rel: string) => readFileSync(ws(rel), "utf8");

  function of(sessionId: string): acp.SessionUpdate[] {
    return updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }
  function text(sessionId: string): string {
    return of(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => ((u as { content: { text?: string } }).content.text ?? ""))
      .join("");
  }
  /** The last tool_call_update of the session's only tool call. */
  function finalUpdate(sessionId: string): acp.ToolCallUpdate {
    const calls = of(sessionId).filter((u) => u.sessionUpdate === "tool_call") as acp.ToolCall[];
    assert.equal(calls.length, 1, "one tool call");
    const last = of(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update" && (u as acp.ToolCallUpdate).toolCallId === calls[0].toolCallId)
      .at(-1) as acp.ToolCallUpdate | undefined;
    assert.ok(last, "a tool_call_update");
    return last;
  }

  /** The first update of `sessionId` matching, awaited (bounded) when it has not come yet. */
  function nextUpdate(sessionId: string, match: (u: acp.SessionUpdate) => boolean, what: string): Promise<acp.SessionUpdate> {
    const seen = of(sessionId).find(match);
    if (seen) return Promise.resolve(seen);
    return within(
      new Promise<acp.SessionUpdate>((resolve) => {
        const off = client.on("update", (n) => {
          if (n.sessionId === sessionId && match(n.update)) {
            off();
            resolve(n.update);
          }
        });
      }),
      10_000,
      what,
    );
  }

  async function turn(sessionId: string, prompt: string): Promise<acp.PromptResponse> {
    return within(client.prompt(sessionId, prompt), 20_000, `the turn "${prompt}"`);
  }

  async function session(mode?: string): Promise<string> {
    const s = await client.newSession(env.workspace);
    if (mode) await client.setMode(s.sessionId, mode);
    return s.sessionId;
  }

  test("session/new offers the four modes; set_mode switches, confirms to every attached editor and is stored", async () => {
    const s = await client.newSession(env.workspace);
    assert.equal(s.modes?.currentModeId, "ask");
    assert.deepEqual(s.modes?.availableModes.map((m) => m.id), ["read-only", "ask", "auto-edit", "full-auto"]);
    assert.ok(s.modes?.availableModes.every((m) => m.name && m.description), "each mode has a name and a description");
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "ask");

    await client.setMode(s.sessionId, "auto-edit");
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "auto-edit");
    // The confirmation is a notification: it may arrive after set_mode's answer.
    await nextUpdate(
      s.sessionId,
      (u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "auto-edit",
      "current_mode_update confirming auto-edit",
    );

    await assert.rejects(client.setMode(s.sessionId, "no-such-mode"), (e: unknown) => {
      assert.ok(e instanceof HearthRpcError, String(e));
      assert.equal(e.code, -32602);
      assert.match(e.message, /modeId/);
      assert.match(e.message, /no-such-mode/);
      return true;
    });
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "auto-edit", "a refused switch changes nothing");

    // A second editor loads the session: the stored mode comes back, and a
    // switch by the first editor reaches it as current_mode_update.
    const other = new HearthClient({ path: bin, env: env.env, cwd: env.workspace });
    try {
      const seen: acp.SessionNotification[] = [];
      other.on("update", (n) => seen.push(n));
      const loaded = await other.loadSession(s.sessionId, env.workspace);
      assert.equal(loaded.modes?.currentModeId, "auto-edit");
      assert.equal(other.sessionModes(s.sessionId)?.currentModeId, "auto-edit");
      const confirmed = new Promise<void>((resolve) => {
        const off = other.on("update", (n) => {
          if (n.sessionId === s.sessionId && n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "full-auto") {
            off();
            resolve();
          }
        });
      });
      await client.setMode(s.sessionId, "full-auto");
      await within(confirmed, 10_000, "current_mode_update at the other editor");
      assert.equal(other.sessionModes(s.sessionId)?.currentModeId, "full-auto", "the other editor tracks the switch");
    } finally {
      other.dispose();
    }
  });

  test("ask: write_file asks with the diff; allow_once writes and the completed update carries the diff", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "allow_once" });
    const res = await turn(id, simCall("write_file", { path: "a.txt", content: "changed\n" }));
    assert.equal(res.stopReason, "end_turn");

    assert.equal(asked.length, 1, "one permission request");
    const req = asked[0];
    assert.equal(req.sessionId, id);
    assert.deepEqual(req.options.map((o) => o.kind), OPTION_KINDS);
    assert.deepEqual(req.options.map((o) => o.optionId), OPTION_KINDS);
    const tc = req.toolCall;
    assert.equal(tc.kind, "edit");
    assert.equal(tc.status, "pending");
    assert.match(tc.title ?? "", /a\.txt/);
    assert.deepEqual(tc.locations?.map((l) => l.path), [ws("a.txt")]);
    assert.deepEqual(tc.rawInput, { path: "a.txt", content: "changed\n" });
    assert.deepEqual(tc.content, [{ type: "diff", path: ws("a.txt"), oldText: ORIGINAL_A, newText: "changed\n" }]);
    const call = of(id).find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
    assert.equal(tc.toolCallId, call.toolCallId, "the request names the reported tool call");

    assert.equal(read("a.txt"), "changed\n");
    const done = finalUpdate(id);
    assert.equal(done.status, "completed");
    assert.equal(done.content?.length, 2);
    assert.equal(done.content?.[0].type, "content");
    assert.deepEqual(done.content?.[1], { type: "diff", path: ws("a.txt"), oldText: ORIGINAL_A, newText: "changed\n" });
    assert.match(text(id), /I called write_file 1 time/);
  });

  test("ask: reject_once leaves the file untouched, fails the call and tells the model", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "reject_once" });
    const res = await turn(id, simCall("write_file", { path: "a.txt", content: "changed\n" }));
    assert.equal(res.stopReason, "end_turn");
    assert.equal(asked.length, 1);
    assert.equal(read("a.txt"), ORIGINAL_A);
    const done = finalUpdate(id);
    assert.equal(done.status, "failed");
    assert.ok(!done.content?.some((c) => c.type === "diff"), "no diff for an edit that was not made");
    assert.match(text(id), /rejected this write_file call/);
  });

  test("an option the daemon did not offer reaches it as cancelled: the call is refused", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "sudo" });
    const res = await turn(id, simCall("write_file", { path: "a.txt", content: "changed\n" }));
    assert.equal(res.stopReason, "end_turn");
    assert.equal(asked.length, 1);
    assert.equal(read("a.txt"), ORIGINAL_A);
    assert.equal(finalUpdate(id).status, "failed");
    assert.match(text(id), /cancelled by the user/);
  });

  test("a client without a permission handler answers cancelled", async () => {
    const bare = new HearthClient({ path: bin, env: env.env, cwd: env.workspace });
    try {
      const s = await bare.newSession(env.workspace);
      const said: string[] = [];
      bare.on("update", (n) => {
        if (n.sessionId === s.sessionId && n.update.sessionUpdate === "agent_message_chunk") {
          said.push((n.update.content as { text?: string }).text ?? "");
        }
      });
      const res = await within(bare.prompt(s.sessionId, simCall("write_file", { path: "a.txt", content: "changed\n" })), 20_000, "the turn");
      assert.equal(res.stopReason, "end_turn");
      assert.equal(read("a.txt"), ORIGINAL_A);
      assert.match(said.join(""), /cancelled by the user/);
      assert.equal(asked.length, 0, "the other client's handler was not asked");
    } finally {
      bare.dispose();
    }
  });

  test("allow_always keeps a rule for the file in the workspace: another session writes it without asking, another file asks", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "allow_always" });
    await turn(id, simCall("write_file", { path: "a.txt", content: "one\n" }));
    assert.equal(asked.length, 1);
    assert.match(asked[0].options.find((o) => o.kind === "allow_always")?.name ?? "", /`a\.txt`/);
    assert.equal(read("a.txt"), "one\n");
    answer = undefined; // a second request would fail the test
    updates = [];
    await turn(id, simCall("write_file", { path: "a.txt", content: "two\n" }));
    assert.equal(asked.length, 1, "not asked again");
    assert.equal(read("a.txt"), "two\n");
    assert.equal(finalUpdate(id).status, "completed");

    // Another session: the rule holds for a.txt; another file asks.
    const fresh = await session();
    await turn(fresh, simCall("write_file", { path: "a.txt", content: "three\n" }));
    assert.equal(asked.length, 1, "the workspace's rule spared the question");
    assert.equal(read("a.txt"), "three\n");
    answer = async () => ({ outcome: "selected", optionId: "reject_once" });
    await turn(fresh, simCall("write_file", { path: "b.txt", content: "b\n" }));
    assert.equal(asked.length, 2, "another file asks");

    const { rules } = await client.rules();
    assert.deepEqual(rules.map((r) => [r.kind, r.pattern]), [["path", "a.txt"]]);
    for (const r of rules) assert.equal(await client.revokeRule(r.id).then((x) => x.revoked), 1);
    assert.deepEqual((await client.rules()).rules, []);
  });

  test("a command that only reads runs without asking; one that writes asks", async () => {
    const id = await session();
    await turn(id, simCall("shell", { command: "git status 2>&1; ls | head -3" }));
    assert.equal(asked.length, 0, "a read-only command asked");
    assert.equal(finalUpdate(id).status, "completed");
    answer = async () => ({ outcome: "selected", optionId: "reject_once" });
    updates = [];
    await turn(id, simCall("shell", { command: "rm a.txt" }));
    assert.equal(asked.length, 1, "rm asked");
    assert.equal(read("a.txt"), ORIGINAL_A);
  });

  test("reject_always is remembered: the next call is refused without asking", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "reject_always" });
    await turn(id, simCall("write_file", { path: "a.txt", content: "one\n" }));
    assert.equal(asked.length, 1);
    answer = undefined;
    updates = [];
    await turn(id, simCall("write_file", { path: "a.txt", content: "two\n" }));
    assert.equal(asked.length, 1, "not asked again");
    assert.equal(read("a.txt"), ORIGINAL_A);
    assert.equal(finalUpdate(id).status, "failed");
    assert.match(text(id), /rejected every write_file call/);
  });

  test("edit_file asks with the replacement's diff; a new file's diff has no oldText", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "allow_once" });
    const before = read("src/main.go");
    await turn(id, simCall("edit_file", { path: "src/main.go", old_string: "func main() {}", new_string: "func main() { println(1) }" }));
    const after = "package main\n\nfunc main() { println(1) }\n";
    assert.equal(read("src/main.go"), after);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].toolCall.kind, "edit");
    const expected = { type: "diff", path: ws("src/main.go"), oldText: before, newText: after };
    assert.deepEqual(asked[0].toolCall.content, [expected]);
    assert.deepEqual(finalUpdate(id).content?.at(-1), expected);

    updates = [];
    await turn(id, simCall("write_file", { path: "notes/new.txt", content: "brand new\n" }));
    assert.equal(asked.length, 2);
    const diff = asked[1].toolCall.content?.[0] as acp.Diff & { type: string };
    assert.equal(diff.type, "diff");
    assert.equal(diff.path, ws("notes/new.txt"));
    assert.equal(diff.newText, "brand new\n");
    assert.equal(diff.oldText ?? undefined, undefined, "no oldText for a new file");
    assert.equal(read("notes/new.txt"), "brand new\n");
    const done = finalUpdate(id).content?.at(-1) as acp.Diff & { type: string };
    assert.equal(done.type, "diff");
    assert.equal(done.oldText ?? undefined, undefined);
  });

  test("shell asks with the command as text; allowed, it runs", async () => {
    const id = await session();
    answer = async () => ({ outcome: "selected", optionId: "allow_once" });
    await turn(id, simCall("shell", { command: "echo ran > ran.txt" }));
    assert.equal(asked.length, 1);
    const tc = asked[0].toolCall;
    assert.equal(tc.kind, "execute");
    assert.deepEqual(tc.content, [{ type: "content", content: { type: "text", text: "$ echo ran > ran.txt" } }]);
    assert.equal(read("ran.txt"), "ran\n");
    assert.equal(finalUpdate(id).status, "completed");
  });

  test("read-only refuses edits and commands without asking", async () => {
    const id = await session("read-only");
    await turn(id, simCall("write_file", { path: "a.txt", content: "changed\n" }));
    assert.equal(read("a.txt"), ORIGINAL_A);
    assert.equal(finalUpdate(id).status, "failed");
    assert.match(text(id), /read-only mode/);
    updates = [];
    await turn(id, simCall("shell", { command: "echo ran > ro.txt" }));
    assert.equal(existsSync(ws("ro.txt")), false);
    assert.equal(finalUpdate(id).status, "failed");
    assert.equal(asked.length, 0, "never asked");
  });

  test("auto-edit edits without asking but asks before a command", async () => {
    const id = await session("auto-edit");
    await turn(id, simCall("write_file", { path: "a.txt", content: "auto\n" }));
    assert.equal(asked.length, 0, "the edit did not ask");
    assert.equal(read("a.txt"), "auto\n");
    assert.deepEqual(finalUpdate(id).content?.at(-1), { type: "diff", path: ws("a.txt"), oldText: ORIGINAL_A, newText: "auto\n" });
    updates = [];
    answer = async () => ({ outcome: "selected", optionId: "reject_once" });
    await turn(id, simCall("shell", { command: "echo ran > ae.txt" }));
    assert.equal(asked.length, 1, "the command asked");
    assert.equal(asked[0].toolCall.kind, "execute");
    assert.equal(existsSync(ws("ae.txt")), false);
  });

  test("full-auto never asks", async () => {
    const id = await session("full-auto");
    await turn(id, simCall("write_file", { path: "a.txt", content: "full\n" }));
    updates = [];
    await turn(id, simCall("shell", { command: "echo ran > fa.txt" }));
    assert.equal(asked.length, 0);
    assert.equal(read("a.txt"), "full\n");
    assert.equal(read("fa.txt"), "ran\n");
  });

  test("cancel while a permission request is pending withdraws it and ends the turn as cancelled", async () => {
    const id = await session();
    let pending!: () => void;
    const isPending = new Promise<void>((r) => (pending = r));
    let abortedWith: unknown;
    answer = (_req, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          abortedWith = signal.reason;
          // Too late: the client already answered "cancelled".
          resolve({ outcome: "selected", optionId: "allow_once" });
        });
        pending();
      });
    const t = client.prompt(id, simCall("write_file", { path: "a.txt", content: "changed\n" }));
    await within(isPending, 20_000, "the permission request");
    await client.cancel(id);
    const res = await within(t, 20_000, "the cancelled turn");
    assert.equal(res.stopReason, "cancelled");
    assert.ok(abortedWith !== undefined, "the handler saw the abort");
    assert.ok(!(abortedWith instanceof HearthGoneError), "aborted by the cancel, not by a disconnect");
    assert.equal(read("a.txt"), ORIGINAL_A);
    // The session takes the next prompt.
    updates = [];
    const again = await turn(id, "still there?");
    assert.equal(again.stopReason, "end_turn");
    assert.equal(text(id), "You said: still there?");
  });
});
