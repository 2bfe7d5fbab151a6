// The client side of permissions, modes and diffs, against a stand-in agent
// built on the same SDK (the daemon is gaining these; see fixtures/fake-agent.ts).
import type * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { HearthClient, type PermissionHandler } from "../src/acp/client.js";
import { HearthGoneError, HearthRpcError } from "../src/acp/errors.js";
import { within } from "./helpers.js";

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-agent.js");

describe("permissions, modes and diffs (ACP agent on the SDK)", () => {
  let dir: string;
  let client: HearthClient;
  let handler: PermissionHandler | undefined;
  const updates: acp.SessionNotification[] = [];

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "hv-fake-"));
    client = new HearthClient({
      path: process.execPath,
      args: [AGENT],
      onPermission: (req, signal) => {
        if (!handler) throw new Error("no permission handler set for this test");
        return handler(req, signal);
      },
    });
    client.on("update", (n) => updates.push(n));
  });

  after(() => {
    client.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test("modes come with the session and set_mode switches them", async () => {
    const s = await client.newSession(dir);
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "ask");
    assert.deepEqual(
      client.sessionModes(s.sessionId)?.availableModes.map((m) => m.id),
      ["read-only", "ask", "auto-edit", "full-auto"],
    );
    updates.length = 0;
    await client.setMode(s.sessionId, "auto-edit");
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "auto-edit");
    assert.ok(
      updates.some((n) => n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "auto-edit"),
      "the agent confirmed with current_mode_update",
    );
    await assert.rejects(client.setMode(s.sessionId, "no-such-mode"), HearthRpcError);
    assert.equal(client.sessionModes(s.sessionId)?.currentModeId, "auto-edit");
  });

  test("a permission request reaches the handler and its answer reaches the agent", async () => {
    const s = await client.newSession(dir);
    let seen: acp.RequestPermissionRequest | undefined;
    handler = async (req) => {
      seen = req;
      return { outcome: "selected", optionId: "allow_once" };
    };
    updates.length = 0;
    const res = await within(client.prompt(s.sessionId, "edit please"), 10_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    assert.ok(seen);
    assert.equal(seen.toolCall.toolCallId, "call_edit_1");
    assert.deepEqual(
      seen.options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once", "reject_always"],
    );
    const call = updates.find((n) => n.update.sessionUpdate === "tool_call")?.update as acp.ToolCall;
    assert.equal(call.status, "pending");
    const diff = call.content?.[0] as acp.Diff & { type: string };
    assert.equal(diff.type, "diff");
    assert.equal(diff.path, `${dir}/a.txt`);
    assert.equal(diff.oldText, "hello\n");
    assert.equal(diff.newText, "hello, world\n");
    const last = updates.filter((n) => n.update.sessionUpdate === "tool_call_update").at(-1)?.update as acp.ToolCallUpdate;
    assert.equal(last.status, "completed");
    const text = updates
      .filter((n) => n.update.sessionUpdate === "agent_message_chunk")
      .map((n) => ((n.update as { content: { text: string } }).content.text))
      .join("");
    assert.equal(text, "permission: allow_once; mode: ask");
  });

  test("a rejection fails the edit", async () => {
    const s = await client.newSession(dir);
    handler = async () => ({ outcome: "selected", optionId: "reject_once" });
    updates.length = 0;
    const res = await within(client.prompt(s.sessionId, "edit"), 10_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    const last = updates.filter((n) => n.update.sessionUpdate === "tool_call_update").at(-1)?.update as acp.ToolCallUpdate;
    assert.equal(last.status, "failed");
  });

  test("an option the agent did not offer is answered as cancelled", async () => {
    const s = await client.newSession(dir);
    handler = async () => ({ outcome: "selected", optionId: "sudo" });
    const res = await within(client.prompt(s.sessionId, "edit"), 10_000, "the turn");
    assert.equal(res.stopReason, "cancelled");
  });

  test("cancel withdraws a pending permission request and ends the turn as cancelled", async () => {
    const s = await client.newSession(dir);
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    let aborted = false;
    handler = (_req, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
          // Too late: the client already answered "cancelled".
          resolve({ outcome: "selected", optionId: "allow_once" });
        });
        asked();
      });
    const turn = client.prompt(s.sessionId, "edit");
    await within(askedP, 10_000, "the permission request");
    await client.cancel(s.sessionId);
    const res = await within(turn, 10_000, "the turn");
    assert.equal(res.stopReason, "cancelled");
    assert.equal(aborted, true, "the handler saw the abort");
  });

  test("an agent that dies mid-turn: HearthGoneError with its exit code and stderr", async () => {
    const s = await client.newSession(dir);
    await assert.rejects(within(client.prompt(s.sessionId, "die"), 10_000, "the turn"), (e: unknown) => {
      assert.ok(e instanceof HearthGoneError, String(e));
      assert.match(e.message, /exited with code 3/);
      assert.match(e.message, /simulated crash/);
      return true;
    });
    assert.equal(client.connected, false);
    // Reconnects on the next call.
    const again = await client.newSession(dir);
    const res = await within(client.prompt(again.sessionId, "hi"), 10_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
  });
});
