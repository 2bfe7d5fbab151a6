// Acceptance test of what the model is told: the official ACP SDK opens a
// session in a subdirectory of a git repository through `hearth acp`, and a
// Responses WebSocket server written for this suite (fake-responses.mjs,
// sharing no code with hearth or its simulator) records what reaches the
// model: hearth's guidance as the instructions, the environment note
// (working directory, workspace, date, mode, the commands' network), both
// AGENTS.md files root first — and, after session/set_mode, a new note in a
// request that still chains on the last.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';

import { FakeResponsesServer } from './fake-responses.mjs';
import { SchemaCheck } from './schema-check.mjs';
import { daemonLog, hearthBin, removeDir, shortTempDir, startChild, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';

const API_KEY = 'sk-interop-ctx-' + randomBytes(6).toString('hex');

const text = (item) =>
  typeof item.content === 'string' ? item.content : (item.content ?? []).map((p) => p.text ?? '').join('');
const developer = (input) => (input ?? []).filter((it) => it.role === 'developer').map(text);
const ENV = 'Environment of this session';
const day = (d) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

let cleanup = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => {});
});

test('a session opened in a subdirectory of a git repository tells the model its guidance, environment, AGENTS.md files root first, and a mode change incrementally', { timeout: 60_000 }, async (t) => {
  const server = new FakeResponsesServer(API_KEY);
  const port = await server.start();
  cleanup.push(() => server.close());
  const repo = await realpath(await tempDir('hearth-interop-repo-')); // the daemon names paths with symlinks evaluated
  cleanup.push(() => removeDir(repo));
  await mkdir(path.join(repo, '.git'));
  await mkdir(path.join(repo, 'pkg', 'inner'), { recursive: true });
  await writeFile(path.join(repo, 'AGENTS.md'), 'Root rule: run make test before you finish.\n');
  await writeFile(path.join(repo, 'pkg', 'AGENTS.md'), 'Package rule: no new dependencies.\n');
  await writeFile(path.join(repo, 'pkg', 'lib.go'), 'package pkg\n');
  await writeFile(path.join(repo, 'top.txt'), 'at the root\n');
  const cwd = path.join(repo, 'pkg');

  const home = await shortTempDir('hc-');
  cleanup.push(() => removeDir(home));
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  cleanup.push(() => stopDaemon(socketPath));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, {
    HEARTH_SOCKET: socketPath,
    HEARTH_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(home, 'config'), // no user-wide AGENTS.md
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: API_KEY,
    HEARTH_MODEL: 'interop-model-ctx',
  });
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  await relay.spawned;
  cleanup.push(() => stopChild(relay));
  const diag = () => `hearth acp stderr:\n${relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}`;

  const app = acp.client({ name: 'hearth-interop-context' });
  // Every message hearth sends is checked against the official ACP schema.
  const check = new SchemaCheck('hearth acp (context)');
  const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
  const stream = acp.ndJsonStream(writable, readable);
  const before = new Date();
  const { sessionId, first, second } = await withTimeout(
    app.connectWith(stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      const first = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'what is here?' }] });
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'full-auto' });
      const second = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'and now?' }] });
      return { sessionId, first, second };
    }),
    45_000,
    'session/new in a subdirectory → prompt → set_mode → prompt',
    diag,
  );
  const afterAll = new Date();
  assert.equal(first.stopReason, 'end_turn', diag());
  assert.equal(second.stopReason, 'end_turn', diag());
  assert.deepEqual(check.violations, [], 'messages that break the ACP schema');
  assert.deepEqual(server.violations, []);
  assert.equal(server.sent.filter(({ event }) => event.type === 'error').length, 0, 'no request was refused');

  // The session's own requests: warm-up; prompt 1 and its tool output;
  // prompt 2 and its tool output.
  const creates = server.received.map(({ event }) => event).filter((e) => e.prompt_cache_key === sessionId);
  assert.equal(creates.length, 5, `requests: ${JSON.stringify(creates.map((e) => e.input), null, 1)}`);
  const [warm, ask1, tool1, ask2] = creates;
  t.diagnostic(`instructions: ${warm.instructions.length} characters`);

  // hearth's guidance, byte-identical on every request.
  assert.ok(warm.instructions.startsWith('You are hearth, a coding agent working in the user'), warm.instructions.slice(0, 80));
  assert.ok(warm.instructions.length > 5000 && warm.instructions.length < 12_000);
  for (const e of creates) assert.equal(e.instructions, warm.instructions);

  // The warm-up holds the environment note, then the AGENTS.md files, root first.
  const [note, agents, ...rest] = developer(warm.input);
  assert.deepEqual(rest, []);
  assert.ok(note.startsWith(ENV), note);
  assert.ok(note.includes(`- Working directory: ${cwd}.`), note);
  assert.ok(note.includes(`- Workspace: ${repo}, the root of the git repository.`), note);
  assert.ok(note.includes(`- Date: ${day(before)}`) || note.includes(`- Date: ${day(afterAll)}`), note);
  assert.ok(note.includes('- Mode: ask. ') && note.includes('Commands have the network.'), note);
  const root = agents.indexOf('Root rule: run make test');
  const pkg = agents.indexOf('Package rule: no new dependencies.');
  assert.ok(root >= 0 && pkg > root, agents);
  assert.ok(agents.includes(`==> ${path.join(repo, 'AGENTS.md')} (`), agents);
  assert.ok(agents.includes(`==> ${path.join(cwd, 'AGENTS.md')} (`), agents);

  // The first prompt chains on the warm-up with only the user's message; its
  // list_dir of "." lists the working directory.
  const ids = server.responses.filter((r) => creates.includes(r.request)).map((r) => r.response.id);
  assert.equal(ask1.previous_response_id, ids[0]);
  assert.deepEqual(ask1.input.map((it) => it.role ?? it.type), ['user']);
  const listing = String(tool1.input[0].output);
  assert.ok(listing.includes('lib.go') && !listing.includes('top.txt'), listing);

  // After set_mode, the next prompt still chains, and carries a new note
  // before the user's message.
  assert.equal(ask2.previous_response_id, ids[2], 'the prompt after set_mode chains on the last response');
  assert.deepEqual(ask2.input.map((it) => it.role ?? it.type), ['developer', 'user']);
  const [changed] = developer(ask2.input);
  assert.ok(changed.startsWith(ENV) && changed.includes('- Mode: full-auto. '), changed);
  assert.ok(/Commands (should )?have no network/.test(changed), changed);
  assert.equal(text(ask2.input[1]), 'and now?');
});
