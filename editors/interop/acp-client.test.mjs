// Acceptance test: a third-party ACP client (the official
// @agentclientprotocol/sdk) drives `hearth acp` through one tool-using turn,
// while hearth talks to a Responses WebSocket server written here (with the
// `ws` package, sharing no code with hearth or its simulator). The last test
// runs the `/compact` slash command against hearth's own simulator, whose
// scripted model answers the compaction request with text (this file's
// server answers every user message with a tool call).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';
import { WebSocketServer } from 'ws';

import { SchemaCheck } from './schema-check.mjs';
import {
  daemonLog,
  hearthBin,
  removeDir,
  shortTempDir,
  startChild,
  startSim,
  stopChild,
  stopDaemon,
  tempDir,
  withTimeout,
} from './helpers.mjs';

const API_KEY = 'sk-interop-' + randomBytes(6).toString('hex');
const WORKSPACE_FILES = ['alpha.txt', 'bravo.md'];
const WORKSPACE_DIRS = ['charlie'];
const PROMPT = 'list the files here';

// The Responses API WebSocket server (fake-responses.mjs: written here, with
// the `ws` package, sharing no code with hearth or its simulator).
import { FakeResponsesServer } from './fake-responses.mjs';

// ---------------------------------------------------------------------------

let server;
let sessionId1; // the first test's session, resumed by the second
let workspace;
let hearthHome; // socket + data dir, short path
let acpProc;

before(async () => {
  server = new FakeResponsesServer(API_KEY);
  workspace = await tempDir('hearth-interop-ws-');
  for (const f of WORKSPACE_FILES) await writeFile(path.join(workspace, f), `contents of ${f}\n`);
  for (const d of WORKSPACE_DIRS) await mkdir(path.join(workspace, d));
  hearthHome = await shortTempDir('hi-');
});

after(async () => {
  // The daemon outlives `hearth acp`: stop it first, then the relay.
  const errors = [];
  if (hearthHome) {
    try {
      await stopDaemon(path.join(hearthHome, 's'));
    } catch (err) {
      errors.push(err);
    }
  }
  await stopChild(acpProc).catch((err) => errors.push(err));
  await server?.close();
  await removeDir(workspace);
  await removeDir(hearthHome);
  if (errors.length) throw errors[0];
});

test('the official ACP SDK runs a tool-using turn through hearth acp against a third-party Responses WebSocket server', { timeout: 45_000 }, async (t) => {
  const port = await server.start();
  const socketPath = path.join(hearthHome, 's');
  const dataDir = path.join(hearthHome, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, {
    HEARTH_SOCKET: socketPath,
    HEARTH_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(hearthHome, 'config'), // no user-wide AGENTS.md in what the model is told
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: API_KEY,
    HEARTH_MODEL: 'interop-model-1',
  });

  acpProc = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  await acpProc.spawned;
  const diag = () =>
    `hearth acp stderr:\n${acpProc.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n` +
    `server saw ${server.received.length} frames, ${server.handshakes.length} handshakes`;

  const updates = [];
  const app = acp.client({ name: 'hearth-interop' }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
  });
  // Every message hearth sends is checked against the official ACP schema.
  const check = new SchemaCheck('hearth acp');
  const { writable, readable } = check.streams(acpProc.child.stdin, acpProc.child.stdout);
  const stream = acp.ndJsonStream(writable, readable);

  const { init, sessionId, result } = await withTimeout(
    app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: 'hearth-interop', version: '0.0.0' },
      });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
      const result = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: PROMPT }],
      });
      return { init, sessionId, result };
    }),
    30_000,
    'initialize → session/new → session/prompt',
    diag,
  );

  sessionId1 = sessionId;
  // --- what the ACP client saw
  assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
  t.diagnostic(`schema-checked: ${check.summary()}`);
  assert.deepEqual(check.violations, [], 'messages that break the ACP schema');
  assert.equal(typeof sessionId, 'string');
  assert.ok(sessionId.length > 0);
  assert.equal(result.stopReason, 'end_turn', diag());
  for (const u of updates) assert.equal(u.sessionId, sessionId, 'update for another session');

  const kinds = updates.map((u) => u.update.sessionUpdate);
  t.diagnostic(`session/update kinds: ${kinds.join(', ')}`);
  const toolCalls = updates.filter((u) => u.update.sessionUpdate === 'tool_call').map((u) => u.update);
  assert.equal(toolCalls.length, 1, `one tool_call expected, got ${JSON.stringify(toolCalls)}`);
  const toolCallId = toolCalls[0].toolCallId;
  assert.equal(toolCalls[0].name, 'list_dir', 'the tool call names its tool (ACP 1.34)');
  const completed = updates
    .map((u) => u.update)
    .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === toolCallId && u.status === 'completed');
  assert.equal(completed.length, 1, `one completed tool_call_update for ${toolCallId}: ${JSON.stringify(updates)}`);
  const firstTool = kinds.indexOf('tool_call');
  const lastText = kinds.lastIndexOf('agent_message_chunk');
  assert.ok(firstTool >= 0 && lastText > firstTool, `the answer streams after the tool call: ${kinds}`);

  const text = updates
    .map((u) => u.update)
    .filter((u) => u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text')
    .map((u) => u.content.text)
    .join('');
  for (const name of [...WORKSPACE_FILES, ...WORKSPACE_DIRS]) {
    assert.ok(text.includes(name), `answer should name ${name}: ${JSON.stringify(text)}`);
  }
  assert.ok(text.startsWith('The workspace holds:'), `answer is the model's text: ${JSON.stringify(text)}`);

  // --- what the Responses server saw
  assert.deepEqual(server.violations, []);
  assert.deepEqual(server.httpRequests, [], 'no HTTP fallback');
  assert.equal(server.handshakes.length, 1, `exactly one WebSocket handshake: ${JSON.stringify(server.handshakes)}`);
  assert.equal(server.handshakes[0].authorization, `Bearer ${API_KEY}`);
  assert.ok(server.handshakes[0].accepted);
  assert.equal(server.sent.filter(({ event }) => event.type === 'error').length, 0, 'no request was refused');

  // The session's own requests (prompt_cache_key is its id): the daemon also
  // keeps a spare session warm in the workspace, on a lane of its own.
  const creates = server.received.map(({ event }) => event).filter((e) => e.prompt_cache_key === sessionId);
  assert.equal(creates.length, 3, `warm-up, prompt, tool output: ${JSON.stringify(creates, null, 1)}`);
  assert.ok(creates.every((e) => e.type === 'response.create'));

  const [warm, ask, toolTurn] = creates;
  assert.equal(warm.generate, false, 'the first frame is the warm-up');
  // hearth's guidance is a developer message at the start of the chain, not
  // instructions resent with every create; then the mode's permissions and
  // the environment (no AGENTS.md in this workspace).
  const says = (item) => (typeof item.content === 'string' ? item.content : item.content.map((p) => p.text).join(''));
  assert.deepEqual(warm.input.map((it) => it.role ?? it.type), ['developer', 'developer', 'user'], JSON.stringify(warm.input));
  assert.ok(says(warm.input[0]).startsWith('You are hearth'), says(warm.input[0]).slice(0, 80));
  assert.ok(says(warm.input[1]).startsWith('<permissions instructions>\nApproval mode: `ask`.'), says(warm.input[1]));
  assert.ok(says(warm.input[2]).startsWith('<environment_context>\n'), says(warm.input[2]));
  assert.equal(warm.model, 'interop-model-1');
  assert.ok(!('previous_response_id' in warm) || warm.previous_response_id == null);
  const toolNames = (warm.tools ?? []).map((tool) => `${tool.type}:${tool.name}`).sort();
  // An unknown model's profile: apply_patch as a function taking {input}; update_plan is hearth's own;
  // view_image as it takes images; no hosted web search.
  assert.deepEqual(toolNames, ['function:apply_patch', 'function:edit_file', 'function:grep', 'function:list_dir', 'function:read_file', 'function:shell', 'function:update_plan', 'function:view_image', 'function:write_file']);
  for (const tool of warm.tools) assert.equal(tool.parameters?.type, 'object', `${tool.name} has a JSON schema`);

  for (const e of creates) {
    // No instructions to resend (at most a short one); tools are not
    // inherited: identical on every request.
    assert.ok((e.instructions ?? '').length <= 1024, `instructions of ${(e.instructions ?? '').length} characters`);
    assert.equal(JSON.stringify(e.tools), JSON.stringify(warm.tools));
    assert.equal(e.stream_id, warm.stream_id, 'one lane for the session');
  }
  for (const e of [ask, toolTurn]) assert.notEqual(e.generate, false);

  const ids = server.responses.filter((r) => creates.includes(r.request)).map((r) => r.response.id);
  assert.equal(ids.length, 3);
  assert.equal(ask.previous_response_id, ids[0], 'the prompt chains from the warm-up');
  assert.equal(toolTurn.previous_response_id, ids[1], 'the tool output chains from the function call');

  assert.equal(ask.input.length, 1, `only the new user message: ${JSON.stringify(ask.input)}`);
  assert.equal(ask.input[0].role, 'user');
  assert.equal((ask.input[0].type ?? 'message'), 'message');
  const askText = typeof ask.input[0].content === 'string'
    ? ask.input[0].content
    : ask.input[0].content.map((p) => p.text).join('');
  assert.equal(askText, PROMPT);

  const call = server.responses.find((r) => r.request === ask).response.output[0];
  assert.equal(call.type, 'function_call');
  assert.equal(toolCallId, call.call_id, 'the ACP tool call is the model call');
  assert.equal(toolTurn.input.length, 1, `only the function_call_output: ${JSON.stringify(toolTurn.input)}`);
  assert.equal(toolTurn.input[0].type, 'function_call_output');
  assert.equal(toolTurn.input[0].call_id, call.call_id);
  for (const name of [...WORKSPACE_FILES, ...WORKSPACE_DIRS]) {
    assert.ok(String(toolTurn.input[0].output).includes(name), `list_dir output names ${name}`);
  }

  // Every event of a lane's response echoed its stream_id.
  if (warm.stream_id) {
    const lanes = new Set(server.received.map(({ event }) => event.stream_id));
    assert.ok(server.sent.every(({ event }) => lanes.has(event.stream_id)));
  }
});

test('after the server drops the connection, hearth re-warms with the whole transcript before the next prompt, which chains on it', { timeout: 45_000 }, async () => {
  assert.ok(sessionId1, 'the first test ran');
  const before = server.received.length;
  const handshakes = server.handshakes.length;
  server.drop();

  // Nobody prompts: the daemon notices the drop and re-warms by itself.
  // The session's own requests (the workspace's spare re-warms too).
  const own = () => server.received.slice(before).filter(({ event }) => event.prompt_cache_key === sessionId1);
  await server.waitFor(() => own().length > 0, 20_000, 'a re-warm after the drop');
  assert.equal(server.handshakes.length, handshakes + 1, 'a new handshake');
  const rewarm = own()[0];
  assert.equal(rewarm.event.generate, false, 'the re-warm is a generate:false request');
  assert.ok(!rewarm.event.previous_response_id, 'a new connection: the re-warm is full');
  const types = rewarm.event.input.map((it) => it.role ?? it.type ?? 'message');
  assert.deepEqual(
    types,
    ['developer', 'developer', 'user', 'user', 'function_call', 'function_call_output', 'assistant'],
    'the whole transcript: the guidance, the permissions, the environment, then the turn',
  );
  const says = (item) => (typeof item.content === 'string' ? item.content : item.content.map((p) => p.text).join(''));
  const [guidance, permissions, environment, asked] = rewarm.event.input.map((it) => (it.role ? says(it) : ''));
  assert.ok(guidance.startsWith('You are hearth'), guidance.slice(0, 80));
  assert.ok(permissions.startsWith('<permissions instructions>'), permissions);
  assert.ok(environment.startsWith('<environment_context>'), environment);
  assert.equal(asked, PROMPT);
  assert.ok((rewarm.event.instructions ?? '').length <= 1024, 'no long instructions on the re-warm');
  assert.notEqual(rewarm.conn, server.received[before - 1].conn);
  const rewarmId = server.responses.find((r) => r.request === rewarm.event).response.id;

  // The next prompt, from a new editor connection, chains on the re-warm.
  const socketPath = path.join(hearthHome, 's');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: path.join(hearthHome, 'd') });
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  await relay.spawned;
  try {
    const app = acp.client({ name: 'hearth-interop-2' });
    const check = new SchemaCheck('hearth acp (2)');
    const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
    const stream = acp.ndJsonStream(writable, readable);
    const result = await withTimeout(
      app.connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        return ctx.request(acp.methods.agent.session.prompt, {
          sessionId: sessionId1,
          prompt: [{ type: 'text', text: 'and once more' }],
        });
      }),
      30_000,
      'the prompt after the re-warm',
    );
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(check.violations, [], 'messages that break the ACP schema');
  } finally {
    await stopChild(relay);
  }
  const next = own()[1].event;
  assert.equal(next.previous_response_id, rewarmId, 'the prompt chains on the re-warm');
  assert.equal(next.input.length, 1, 'only the new user message');
  assert.equal(server.handshakes.length, handshakes + 1, 'no further handshake');
  assert.deepEqual(server.violations, []);
});

test('the official ACP SDK sees the offered /compact command and runs it: the session compacts and goes on answering', { timeout: 60_000 }, async (t) => {
  const key = 'sk-interop-sim-' + randomBytes(6).toString('hex');
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key]);
  const home = await shortTempDir('hc-');
  const ws = await tempDir('hearth-interop-compact-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: dataDir, XDG_CONFIG_HOME: path.join(home, 'config'), OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: key });
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  try {
    await relay.spawned;
    const diag = () => `hearth acp stderr:\n${relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const updates = [];
    const app = acp.client({ name: 'hearth-interop-compact' }).onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
    const check = new SchemaCheck('hearth acp (compact)');
    const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
    const stream = acp.ndJsonStream(writable, readable);
    // The agent's text of the updates from index `from` on.
    const said = (from) =>
      updates
        .slice(from)
        .map((u) => u.update)
        .filter((u) => u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text')
        .map((u) => u.content.text)
        .join('');
    const marks = {};
    const { sessionId, first, compacted, after } = await withTimeout(
      app.connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
        const prompt = (text) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
        const first = await prompt('remember the word heliotrope');
        marks.compact = updates.length;
        const compacted = await prompt('/compact');
        marks.after = updates.length;
        const after = await prompt('still there?');
        return { sessionId, first, compacted, after };
      }),
      45_000,
      'a prompt, /compact, and a prompt after it',
      diag,
    );
    for (const u of updates) assert.equal(u.sessionId, sessionId, 'update for another session');
    t.diagnostic(`session/update kinds: ${updates.map((u) => u.update.sessionUpdate).join(', ')}`);
    assert.deepEqual(check.violations, [], 'messages that break the ACP schema');

    // The offer: ACP's available_commands_update, naming compact.
    const offers = updates.map((u) => u.update).filter((u) => u.sessionUpdate === 'available_commands_update');
    assert.ok(offers.length >= 1, `an available_commands_update: ${JSON.stringify(updates)}`);
    const offered = offers.at(-1).availableCommands;
    const compact = offered.find((c) => c.name === 'compact');
    assert.ok(compact, `compact is offered: ${JSON.stringify(offered)}`);
    assert.equal(typeof compact.description, 'string');
    assert.ok(compact.description.length > 0, 'with a description');
    const firstOffer = updates.findIndex((u) => u.update.sessionUpdate === 'available_commands_update');
    assert.ok(firstOffer < marks.compact, 'offered before the user could type /compact');

    assert.equal(first.stopReason, 'end_turn', diag());
    assert.match(said(0), /You said: remember the word heliotrope/);

    // The command: a turn of its own, told in the answer, not sent to the model as a prompt.
    assert.equal(compacted.stopReason, 'end_turn', diag());
    const notice = said(marks.compact);
    assert.match(notice, /hearth: compacted this session \(asked by the user\)/, notice);
    assert.doesNotMatch(notice, /You said: \/compact/, 'the model was not prompted with /compact');

    // The session goes on from the summary.
    assert.equal(after.stopReason, 'end_turn', diag());
    assert.match(said(marks.after), /You said: still there\?/);
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    await stopChild(relay).catch((err) => errors.push(err));
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});
