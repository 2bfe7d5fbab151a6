// The ACP client layer against the real `hearth acp` relay, its auto-started
// daemon and `hearth sim`.
import type * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { HearthClient } from "../src/acp/client.js";
import { HearthGoneError, HearthNotFoundError, HearthRpcError } from "../src/acp/errors.js";
import { findWorkspace, summarize } from "../src/acp/status.js";
import { hearthBinary, isolatedEnv, killPid, startSim, stopDaemonOf, within, type Env, type Sim } from "./helpers.js";

/** Collects a session's updates; `next` awaits the first one matching. */
function recorder(client: HearthClient, sessionId: () => string | undefined) {
  const updates: acp.SessionUpdate[] = [];
  const waiters: { match: (u: acp.SessionUpdate) => boolean; resolve: (u: acp.SessionUpdate) => void }[] = [];
  client.on("update", (n) => {
    if (n.sessionId !== sessionId()) return;
    updates.push(n.update);
    for (const w of [...waiters]) {
      if (w.match(n.update)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(n.update);
      }
    }
  });
  return {
    updates,
    clear() {
      updates.length = 0;
    },
    text(kind = "agent_message_chunk") {
      return updates
        .filter((u) => u.sessionUpdate === kind)
        .map((u) => ((u as { content: { type: string; text?: string } }).content.text ?? ""))
        .join("");
    },
    next(match: (u: acp.SessionUpdate) => boolean, what: string, ms = 15_000) {
      const seen = updates.find(match);
      if (seen) return Promise.resolve(seen);
      return within(new Promise<acp.SessionUpdate>((resolve) => waiters.push({ match, resolve })), ms, what);
    },
  };
}

describe("hearth acp + hearth sim", () => {
  let bin: string;
  let sim: Sim;
  let env: Env;
  let client: HearthClient;
  let sessionId: string | undefined;
  let rec: ReturnType<typeof recorder>;
  const daemons = new Set<number>();

  before(async () => {
    bin = hearthBinary();
    sim = await startSim(bin);
    env = isolatedEnv(sim);
    client = new HearthClient({ path: bin, env: env.env, cwd: env.workspace });
    rec = recorder(client, () => sessionId);
  });

  after(async () => {
    client?.dispose();
    for (const pid of daemons) killPid(pid);
    if (bin && env) await stopDaemonOf(bin, env);
    await sim?.stop();
    env?.cleanup();
  });

  async function rememberDaemon(): Promise<number> {
    const st = await client.status();
    daemons.add(st.pid);
    return st.pid;
  }

  test("initialize reaches the daemon it started", async () => {
    const init = await client.connect();
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo?.name, "hearth");
    assert.equal(init.agentCapabilities?.loadSession, true);
    assert.ok(init.agentCapabilities?.sessionCapabilities?.list, "hearth advertises session/list");
    assert.equal(client.connected, true);
    const pid = await rememberDaemon();
    assert.ok(pid > 0 && pid !== process.pid && pid !== client.relayPid, `daemon pid ${pid} is its own process`);
  });

  test("a prompt streams the answer and ends the turn", async () => {
    const s = await client.newSession(env.workspace);
    sessionId = s.sessionId;
    assert.match(s.sessionId, /^ses_[0-9a-f]+$/);
    rec.clear();
    const res = await within(client.prompt(s.sessionId, "hello there"), 20_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    // The daemon joins text chunks that wait in its outbox, so three words may
    // well arrive as one chunk: only the text is certain.
    assert.equal(rec.text(), "You said: hello there");
  });

  test("a long answer arrives complete and in order", async () => {
    rec.clear();
    const res = await within(client.prompt(sessionId!, "sim:tokens=3000"), 30_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    const words = rec.text().trim().split(/\s+/);
    assert.equal(words.length, 3000);
    words.forEach((w, i) => assert.equal(w, `tok${i}`));
  });

  test("a tool call is reported with its live status", async () => {
    rec.clear();
    const res = await within(client.prompt(sessionId!, "list the files"), 20_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    const call = rec.updates.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall & { sessionUpdate: "tool_call" };
    assert.ok(call, "a tool_call update");
    assert.equal(call.title, "list_dir");
    assert.equal(call.status, "pending");
    const statuses = rec.updates
      .filter((u) => u.sessionUpdate === "tool_call_update" && (u as acp.ToolCallUpdate).toolCallId === call.toolCallId)
      .map((u) => (u as acp.ToolCallUpdate).status);
    assert.deepEqual(statuses, ["in_progress", "completed"]);
    const done = rec.updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && (u as acp.ToolCallUpdate).status === "completed",
    ) as acp.ToolCallUpdate;
    const out = JSON.stringify(done.content);
    assert.match(out, /a\.txt/);
    assert.match(out, /src/);
    // The tool call comes before the answer, which quotes its result.
    const callAt = rec.updates.indexOf(call);
    const firstText = rec.updates.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
    assert.ok(callAt < firstText, "tool call before the answer");
    assert.match(rec.text(), /I called list_dir 1 time/);
  });

  test("session/list finds the session and session/load replays it", async () => {
    const sessions = await client.listSessions(env.workspace);
    const mine = sessions.find((s) => s.sessionId === sessionId);
    assert.ok(mine, `session ${sessionId} listed among ${sessions.map((s) => s.sessionId).join(", ")}`);
    rec.clear();
    await client.loadSession(sessionId!, env.workspace);
    const users = rec.updates.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => (u as { content: { text: string } }).content.text);
    assert.deepEqual(users, ["hello there", "sim:tokens=3000", "list the files"]);
    assert.ok(rec.updates.some((u) => u.sessionUpdate === "tool_call"), "the tool call is replayed");
    assert.match(rec.text(), /^You said: hello there/);
  });

  test("_hearth/status reports the workspace and the last turn", async () => {
    const st = await client.status();
    assert.equal((await client.statusIfConnected())?.pid, st.pid, "the poll uses the live connection");
    assert.equal(st.socket, env.socket);
    const ws = findWorkspace(st, env.workspace);
    assert.ok(ws, `workspace ${env.workspace} in ${JSON.stringify(st.workspaces.map((w) => w.root))}`);
    assert.ok(["ready", "warming", "streaming", "connecting", "re-warming", "http-fallback"].includes(ws.state), ws.state);
    assert.ok(ws.lastTurnMs >= 0);
    assert.ok(ws.fullRequests + ws.incrementalRequests >= 3, "the three turns made requests");
    const sum = summarize(ws, true);
    assert.ok(sum.tooltip.includes(ws.root));
    assert.notEqual(sum.label, "reconnecting");
  });

  test("_hearth/inspect returns the session's turns", async () => {
    const res = (await client.inspect(sessionId!)) as { session?: Record<string, unknown> };
    assert.ok(res.session, "a session object");
    const dump = JSON.stringify(res);
    assert.ok(dump.includes(sessionId!));
    assert.ok(dump.includes("hello there"));
  });

  test("an unknown session is an RPC error, and the connection keeps serving", async () => {
    await assert.rejects(client.prompt("ses_000000000000000000000000", "hi"), (e: unknown) => {
      assert.ok(e instanceof HearthRpcError, String(e));
      assert.equal(e.code, -32002);
      return true;
    });
    assert.equal(client.connected, true);
    await client.status();
  });

  // A long turn whose length is the daemon's own work: 150 model round trips,
  // each running a tool and committing it (hearth allows 200 per turn).
  const LONG_TURN = "sim:calls=150 sim:tool=list_dir";

  test("cancel ends a running turn as cancelled", async () => {
    rec.clear();
    const turn = client.prompt(sessionId!, LONG_TURN);
    await rec.next((u) => u.sessionUpdate === "tool_call", "the first tool call");
    await client.cancel(sessionId!);
    const res = await within(turn, 20_000, "the cancelled turn to end");
    assert.equal(res.stopReason, "cancelled");
    const calls = rec.updates.filter((u) => u.sessionUpdate === "tool_call").length;
    assert.ok(calls < 150, `the turn was cut short (${calls} tool calls)`);
    // The session takes the next prompt.
    rec.clear();
    const again = await within(client.prompt(sessionId!, "still there?"), 20_000, "the next turn");
    assert.equal(again.stopReason, "end_turn");
    assert.equal(rec.text(), "You said: still there?");
  });

  test("the daemon going away mid-turn fails the turn clearly; the next call reconnects", async () => {
    const pid = await rememberDaemon();
    rec.clear();
    const disconnected = new Promise<HearthGoneError>((resolve) => {
      const off = client.on("disconnected", (e) => {
        off();
        resolve(e);
      });
    });
    const turn = client.prompt(sessionId!, LONG_TURN);
    turn.catch(() => {}); // asserted below; no unhandled rejection meanwhile
    await rec.next((u) => u.sessionUpdate === "tool_call", "the first tool call");
    killPid(pid, "SIGKILL");
    await assert.rejects(within(turn, 15_000, "the turn to fail"), (e: unknown) => {
      assert.ok(e instanceof HearthGoneError, `HearthGoneError, got ${String(e)}`);
      assert.match(e.message, /daemon went away/);
      assert.match(e.message, /restarted on your next action/);
      return true;
    });
    const gone = await within(disconnected, 5_000, "the disconnected event");
    assert.ok(gone instanceof HearthGoneError);
    assert.equal(client.connected, false);
    assert.equal(await client.statusIfConnected(), undefined, "a status poll does not restart the daemon");

    // The next action starts a new relay and daemon; the stored session carries on.
    rec.clear();
    const res = await within(client.prompt(sessionId!, "after the crash"), 30_000, "the turn after reconnecting");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(rec.text(), "You said: after the crash");
    const newPid = await rememberDaemon();
    assert.notEqual(newPid, pid, "a new daemon");
  });

  test("a relay that cannot start the daemon: initialize is answered with why, at once", async () => {
    // HEARTH_SOCKET under a regular file: `hearth acp` cannot create the socket's directory.
    const blocker = `${env.dir}/not-a-dir`;
    writeFileSync(blocker, "");
    const c = new HearthClient({
      path: bin,
      env: { ...env.env, HEARTH_SOCKET: `${blocker}/s.sock`, HEARTH_DATA_DIR: `${blocker}/data` },
      cwd: env.workspace,
    });
    try {
      // The relay answers the editor's initialize with the daemon's own
      // reason (an error response), then exits.
      await assert.rejects(within(c.connect(), 20_000, "initialize to fail"), (e: unknown) => {
        assert.ok(e instanceof HearthRpcError, `HearthRpcError, got ${String(e)}`);
        assert.match(e.message, /start the daemon: .*not a directory/);
        return true;
      });
      assert.equal(c.connected, false);
    } finally {
      c.dispose();
    }
  });

  test("a missing binary is reported with where to get it", async () => {
    const c = new HearthClient({ path: `${env.dir}/no-such-hearth`, env: env.env });
    await assert.rejects(c.connect(), (e: unknown) => {
      assert.ok(e instanceof HearthNotFoundError);
      assert.match(e.message, /no-such-hearth/);
      assert.match(e.message, /hearth\.path/);
      assert.match(e.message, /https:\/\/github\.com\/hearthd\/hearth#readme/);
      return true;
    });
    const onPath = new HearthClient({ path: "hearth-not-on-path-anywhere", env: { ...env.env, PATH: env.dir } });
    await assert.rejects(onPath.newSession(env.workspace), HearthNotFoundError);
  });
});
