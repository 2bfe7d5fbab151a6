// Acceptance test of what the model is told: the official ACP SDK opens a
// session in a subdirectory of a git repository through `hearth acp`, and a
// Responses WebSocket server written for this suite (fake-responses.mjs,
// sharing no code with hearth or its simulator) records what reaches the
// model: hearth's guidance as the first developer message of the chain (no
// long instructions on any request), the mode's <permissions instructions>,
// both AGENTS.md files root first under "# AGENTS.md instructions for", the
// <environment_context> — and, after session/set_mode, one new permissions
// message in a request that still chains on the last.

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
const texts = (input) => (input ?? []).map(text);
const roles = (input) => (input ?? []).map((it) => it.role ?? it.type);
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

  // No instructions resent with every create: the guidance is in the chain.
  for (const e of creates) assert.ok((e.instructions ?? '').length <= 1024, `instructions of ${(e.instructions ?? '').length} characters`);

  // The warm-up: hearth's guidance, the permissions of ask, the AGENTS.md
  // files root first, then the environment.
  assert.deepEqual(roles(warm.input), ['developer', 'developer', 'user', 'user'], JSON.stringify(warm.input, null, 1));
  const [guidance, permissions, agents, environment] = texts(warm.input);
  t.diagnostic(`guidance: ${guidance.length} characters`);
  assert.ok(guidance.startsWith('You are hearth, a coding agent'), guidance.slice(0, 80));
  assert.ok(guidance.length > 5000 && guidance.length < 16_000, `guidance of ${guidance.length} characters`);
  assert.ok(permissions.startsWith('<permissions instructions>\nApproval mode: `ask`. '), permissions);
  assert.ok(permissions.includes('\nValidation: ') && permissions.endsWith('\n</permissions instructions>'), permissions);
  assert.ok(permissions.includes(' Network: enabled.'), permissions);

  assert.ok(agents.startsWith(`# AGENTS.md instructions for ${cwd}\n\n<INSTRUCTIONS>\n`), agents);
  assert.ok(agents.endsWith('</INSTRUCTIONS>'), agents);
  const root = agents.indexOf('Root rule: run make test');
  const pkg = agents.indexOf('Package rule: no new dependencies.');
  assert.ok(root >= 0 && pkg > root, agents);
  const rootHead = agents.indexOf(`==> ${path.join(repo, 'AGENTS.md')} (`);
  const pkgHead = agents.indexOf(`==> ${path.join(cwd, 'AGENTS.md')} (`);
  assert.ok(rootHead >= 0 && rootHead < root && root < pkgHead && pkgHead < pkg, agents);

  const lines = environment.split('\n');
  assert.equal(lines[0], '<environment_context>', environment);
  assert.equal(lines.at(-1), '</environment_context>', environment);
  assert.equal(lines[1], `  <cwd>${cwd}</cwd>`, environment);
  assert.match(lines[2], /^  <shell>[^<]+<\/shell>$/, environment);
  assert.ok([`  <current_date>${day(before)}</current_date>`, `  <current_date>${day(afterAll)}</current_date>`].includes(lines[3]), environment);
  assert.match(lines[4], /^  <timezone>[^<]+<\/timezone>$/, environment);
  assert.ok(lines.includes(`  <workspace_root>${repo}</workspace_root>`), environment);

  // The first prompt chains on the warm-up with only the user's message; its
  // list_dir of "." lists the working directory.
  const ids = server.responses.filter((r) => creates.includes(r.request)).map((r) => r.response.id);
  assert.equal(ask1.previous_response_id, ids[0]);
  assert.deepEqual(ask1.input.map((it) => it.role ?? it.type), ['user']);
  const listing = String(tool1.input[0].output);
  assert.ok(listing.includes('lib.go') && !listing.includes('top.txt'), listing);

  // After set_mode, the next prompt still chains, and carries one new
  // permissions message before the user's message (the environment is
  // told again only if the day turned meanwhile).
  assert.equal(ask2.previous_response_id, ids[2], 'the prompt after set_mode chains on the last response');
  const turned = day(before) !== day(afterAll);
  const expected = turned ? [['developer', 'user', 'user'], ['developer', 'user']] : [['developer', 'user']];
  assert.ok(expected.some((r) => JSON.stringify(r) === JSON.stringify(roles(ask2.input))), JSON.stringify(ask2.input, null, 1));
  const changed = text(ask2.input[0]);
  assert.ok(changed.startsWith('<permissions instructions>\nApproval mode: `full-auto`. '), changed);
  assert.ok(/ Network: (restricted|should be restricted)/.test(changed), changed);
  assert.ok(changed.endsWith('\n</permissions instructions>'), changed);
  if (ask2.input.length === 3) assert.ok(text(ask2.input[1]).startsWith('<environment_context>'), text(ask2.input[1]));
  assert.equal(text(ask2.input.at(-1)), 'and now?');
});
