// Acceptance test: the official ACP SDK's client forks a session through
// `hearth acp` (session/fork, unstable) while hearth talks to the Responses
// WebSocket server written here (fake-responses.mjs). The fork's first
// prompt continues the parent's latest response on a lane of its own — one
// response.create chained on it, carrying only the new user message — and
// both sessions go on on their own. Every message hearth sends is checked
// against the SDK's schema.unstable.json, which has session/fork and
// session/status.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk/unstable';

import { FakeResponsesServer } from './fake-responses.mjs';
import { daemonLog, hearthBin, removeDir, shortTempDir, startChild, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';
import { SchemaCheck } from './schema-check.mjs';

const API_KEY = 'sk-interop-fork-' + randomBytes(6).toString('hex');

let server;
let workspace;
let home;
let relay;

before(async () => {
  server = new FakeResponsesServer(API_KEY);
  workspace = await tempDir('hearth-interop-fork-');
  await writeFile(path.join(workspace, 'alpha.txt'), 'contents of alpha\n');
  home = await shortTempDir('hf-');
});

after(async () => {
  const errors = [];
  await stopDaemon(path.join(home, 's')).catch((err) => errors.push(err));
  await stopChild(relay).catch((err) => errors.push(err));
  await server?.close();
  await removeDir(workspace);
  await removeDir(home);
  if (errors.length) throw errors[0];
});

test('the official ACP SDK forks a session: the fork continues the parent on a lane of its own, without a resend', { timeout: 60_000 }, async (t) => {
  const port = await server.start();
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, {
    HEARTH_SOCKET: path.join(home, 's'),
    HEARTH_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: API_KEY,
    HEARTH_MODEL: 'interop-model-1',
  });
  relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  await relay.spawned;

  const updates = [];
  const app = acp.client({ name: 'hearth-interop-fork' }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
  });
  const check = new SchemaCheck('hearth acp (fork)', { unstable: true });
  const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
  const stream = acp.ndJsonStream(writable, readable);
  const diag = () =>
    `hearth acp stderr:\n${relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n` +
    `server saw ${server.received.length} frames (lane, previous_response_id): ` +
    JSON.stringify(server.received.map((r) => [r.event.stream_id, r.event.previous_response_id])) +
    `\nschema: ${check.violations.join('\n')}`;

  const marks = {};
  const out = await withTimeout(
    app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId: parent } = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
      const prompt = (sessionId, text) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
      await prompt(parent, 'first question');
      await prompt(parent, 'second question');
      marks.parentLast = server.responses.at(-1);
      marks.forkAt = server.responses.length;
      const forked = await ctx.request(acp.methods.agent.session.fork, { sessionId: parent, cwd: workspace, mcpServers: [] });
      const inFork = await prompt(forked.sessionId, 'a question in the fork');
      marks.parentNext = server.responses.length;
      await prompt(parent, 'the parent goes on');
      const status = await ctx.request(acp.methods.agent.session.status, { sessionId: forked.sessionId });
      let unknown;
      try {
        await ctx.request(acp.methods.agent.session.status, { sessionId: 'ses_unknown' });
      } catch (err) {
        unknown = err;
      }
      return { init, parent, forked, inFork, status, unknown };
    }),
    45_000,
    'two prompts, a fork, a prompt in each',
    diag,
  );
  t.diagnostic(`schema-checked: ${check.summary()}`);
  assert.deepEqual(check.violations, [], 'messages that break the ACP schema (unstable)');
  assert.ok(check.checked.get('ForkSessionResponse') >= 1, 'the fork answer was checked');
  assert.deepEqual(server.violations, []);

  const caps = out.init.agentCapabilities.sessionCapabilities;
  assert.equal(typeof caps.fork, 'object', `sessionCapabilities.fork is advertised: ${JSON.stringify(caps)}`);
  assert.equal(caps.fork._meta?.['hearth/fromTurn'], true);
  assert.deepEqual(caps.status, {});
  assert.notEqual(out.forked.sessionId, out.parent);
  assert.equal(out.inFork.stopReason, 'end_turn', diag());
  assert.equal(out.status.status, 'open');
  assert.equal(out.unknown?.code, -32002, `session/status of an unknown session: ${out.unknown}`);

  // The fork's first request continues the parent's latest response, on a
  // lane of its own, with only the new user message: no warm-up, no resend.
  const parentLast = marks.parentLast;
  const forkFirst = server.responses[marks.forkAt];
  assert.equal(forkFirst.request.previous_response_id, parentLast.response.id, 'the fork chains on the parent');
  assert.ok(forkFirst.lane && forkFirst.lane !== parentLast.lane, `a lane of its own: ${forkFirst.lane} vs ${parentLast.lane}`);
  assert.equal(forkFirst.conn, parentLast.conn, 'on the same connection');
  assert.notEqual(forkFirst.request.generate, false, 'not a warm-up');
  assert.equal(forkFirst.request.input.length, 1, JSON.stringify(forkFirst.request.input));
  assert.match(JSON.stringify(forkFirst.request.input), /a question in the fork/);
  // The parent goes on from its own response, on its own lane.
  const parentNext = server.responses[marks.parentNext];
  assert.equal(parentNext.request.previous_response_id, parentLast.response.id);
  assert.equal(parentNext.lane, parentLast.lane);
  assert.equal(server.handshakes.length, 1, 'one connection for both sessions');

  // The fork's title is its own, told after the answer.
  const titles = updates.filter((u) => u.sessionId === out.forked.sessionId && u.update.sessionUpdate === 'session_info_update' && u.update.title);
  assert.equal(titles[0]?.update.title, 'Fork of first question', JSON.stringify(titles));
  await stopChild(relay);
});
