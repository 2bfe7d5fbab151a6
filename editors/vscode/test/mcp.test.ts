// MCP servers from the `hearth.mcpServers` setting: the setting's form, and a
// tool of hearth's test MCP server called by the simulator's model through
// the real `hearth acp` + `hearth sim`, with this client's permission.
import type * as acp from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { HearthClient } from "../src/acp/client.js";
import { mcpServersFromSetting } from "../src/mcp.js";
import {
  MCP_TEST_SERVER_ARGS,
  hearthBinary,
  isolatedEnv,
  mcpTestServer,
  simCall,
  startSim,
  stopDaemonOf,
  within,
  type Env,
  type Sim,
} from "./helpers.js";

describe("hearth.mcpServers", () => {
  test("the setting, keyed by name, becomes ACP's McpServer list; bad entries are left out with the reason", () => {
    const got = mcpServersFromSetting({
      gh: { command: "npx", args: ["-y", "server-github"], env: { GITHUB_TOKEN: "t" } },
      docs: { type: "http", url: "https://docs.example/mcp", headers: { Authorization: "Bearer x" } },
      old: { type: "sse", url: "http://localhost:9/sse" },
      nocmd: { args: [] },
      weird: { type: "carrier-pigeon" },
      badenv: { command: "x", env: { N: 1 } },
    });
    assert.deepEqual(got.servers, [
      { name: "gh", command: "npx", args: ["-y", "server-github"], env: [{ name: "GITHUB_TOKEN", value: "t" }] },
      { type: "http", name: "docs", url: "https://docs.example/mcp", headers: [{ name: "Authorization", value: "Bearer x" }] },
      { type: "sse", name: "old", url: "http://localhost:9/sse", headers: [] },
    ]);
    assert.equal(got.problems.length, 3);
    assert.match(got.problems.join("\n"), /nocmd: "command"/);
    assert.match(got.problems.join("\n"), /weird: unknown "type"/);
    assert.match(got.problems.join("\n"), /badenv: "env"/);
    assert.deepEqual(mcpServersFromSetting(undefined), { servers: [], problems: [] });
    assert.equal(mcpServersFromSetting([]).problems.length, 1);
  });
});

describe("an MCP tool called through hearth (hearth acp + hearth sim)", () => {
  let bin: string;
  let sim: Sim;
  let env: Env;
  let client: HearthClient;
  const asked: acp.RequestPermissionRequest[] = [];
  const updates: acp.SessionNotification[] = [];
  let init: acp.InitializeResponse | undefined;

  before(async () => {
    bin = hearthBinary();
    const server = mcpTestServer();
    sim = await startSim(bin);
    env = isolatedEnv(sim);
    const { servers, problems } = mcpServersFromSetting({ tests: { command: server, args: MCP_TEST_SERVER_ARGS } });
    assert.deepEqual(problems, []);
    client = new HearthClient({
      path: bin,
      env: env.env,
      cwd: env.workspace,
      mcpServers: servers,
      onPermission: async (req) => {
        asked.push(req);
        return { outcome: "selected", optionId: "allow_once" };
      },
    });
    client.on("update", (n) => updates.push(n));
    client.on("connected", (r) => (init = r));
  });

  after(async () => {
    client?.dispose();
    if (bin && env) await stopDaemonOf(bin, env);
    await sim?.stop();
    env?.cleanup();
  });

  test("initialize advertises http and sse MCP servers; the model's call asks first, runs on the server and completes", async () => {
    const { sessionId } = await within(client.newSession(env.workspace), 40_000, "session/new with an MCP server");
    assert.deepEqual(init?.agentCapabilities?.mcpCapabilities, { http: true, sse: true });
    const res = await within(client.prompt(sessionId, simCall("mcp__tests__echo", { text: "from vscode" })), 20_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].toolCall.title, "tests: echo");
    const mine = updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
    const start = mine.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall | undefined;
    assert.ok(start, "a tool_call update");
    assert.equal(start.title, "mcp__tests__echo");
    const done = mine.filter((u) => u.sessionUpdate === "tool_call_update" && (u as acp.ToolCallUpdate).status === "completed") as acp.ToolCallUpdate[];
    assert.equal(done.length, 1, "the call completed");
    assert.match(JSON.stringify(done[0].content), /echo: from vscode/);
  });
});
