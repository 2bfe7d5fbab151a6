// Acceptance tests of today's ACP with a client the project did not write
// (the official @agentclientprotocol/sdk): the commands right after
// session/new, titles (session_info_update, session/list), resume, load,
// close, delete, a new file created through fs/write_text_file, and the
// login — a terminal auth method run as an editor runs it, then
// authenticate and logout. hearth talks to its own simulator. Every message
// hearth sends is checked against the official ACP schema (schema-check.mjs).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';

import { assertSchema, editor, hearthEnv } from './acp-editor.mjs';
import { daemonLog, hearthBin, removeDir, startChild, startSim, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';

const KEY = 'sk-interop-life-' + randomBytes(6).toString('hex');

let sim;
let simURL;
let simDiag;

before(async () => {
  ({ sim, baseURL: simURL, diag: simDiag } = await startSim(['--api-key', KEY]));
});

after(async () => {
  await stopChild(sim);
});

test('sessions through the official ACP SDK: commands at once, titles, a new file through the editor, resume, load, close, delete — every message valid', { timeout: 120_000 }, async (t) => {
  const { home, env, socket, dataDir } = await hearthEnv(simURL, { OPENAI_API_KEY: KEY });
  const ws = await tempDir('hearth-interop-life-');
  await writeFile(path.join(ws, 'a.txt'), 'alpha\n');
  const a = editor('editor-a', env);
  const b = editor('editor-b', env);
  const diag = () => `daemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
  try {
    const sessionId = await a.run(async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, auth: { terminal: true } },
        clientInfo: { name: 'editor-a', version: '0' },
      });
      const caps = init.agentCapabilities.sessionCapabilities;
      for (const c of ['list', 'resume', 'close', 'delete']) assert.ok(caps[c], `sessionCapabilities.${c}: ${JSON.stringify(caps)}`);
      assert.equal(init.authMethods.length, 1);
      assert.equal(init.authMethods[0].type, 'terminal');
      assert.deepEqual(init.authMethods[0].args, ['login']);

      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      // The commands come right after the answer: no prompt needed.
      await a.waitFor(() => a.of(sessionId, 'available_commands_update').length > 0, 'available_commands_update after session/new');
      assert.ok(a.of(sessionId, 'available_commands_update')[0].availableCommands.some((c) => c.name === 'compact'));

      // A new file, written by the model in ask mode: a permission, then fs/write_text_file.
      const first = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write notes/new.txt hello from hearth' }] });
      assert.equal(first.stopReason, 'end_turn', diag());
      assert.equal(a.permissions, 1);
      const created = path.join(ws, 'notes', 'new.txt');
      assert.deepEqual(a.fsCalls.filter((c) => c.method === 'write'), [{ method: 'write', path: created, content: 'hello from hearth\n' }]);
      assert.equal(await readFile(created, 'utf8'), 'hello from hearth\n', 'the editor created it');

      // The title, before the prompt's answer.
      const infos = a.of(sessionId, 'session_info_update');
      assert.equal(infos.length, 1, JSON.stringify(infos));
      assert.equal(infos[0].title, 'write notes/new.txt hello from hearth');
      assert.ok(!Number.isNaN(Date.parse(infos[0].updatedAt)), infos[0].updatedAt);

      // An edit of it, in auto-edit: read through the editor, written through it.
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'auto-edit' });
      const second = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'edit notes/new.txt hello goodbye' }] });
      assert.equal(second.stopReason, 'end_turn', diag());
      assert.equal(await readFile(created, 'utf8'), 'goodbye from hearth\n');
      assert.ok(a.fsCalls.some((c) => c.method === 'read' && c.path === created), JSON.stringify(a.fsCalls));

      const list = await ctx.request(acp.methods.agent.session.list, { cwd: ws });
      assert.equal(list.sessions.length, 1);
      assert.equal(list.sessions[0].sessionId, sessionId);
      assert.equal(list.sessions[0].title, 'write notes/new.txt hello from hearth');
      assert.equal(list.sessions[0].cwd, ws);
      return sessionId;
    }, 'editor A');

    await b.run(async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      assert.equal(init.authMethods.length, 1);
      assert.equal(init.authMethods[0].type, undefined, 'an agent method for a client without terminal auth');
      assert.match(init.authMethods[0].description, /hearth login/);
      await ctx.request(acp.methods.agent.authenticate, { methodId: 'login' }); // the key is set: ok

      // resume: no replay, the commands after the answer.
      const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, mcpServers: [] });
      assert.equal(resumed.modes.currentModeId, 'auto-edit');
      await b.waitFor(() => b.of(sessionId, 'available_commands_update').length > 0, 'available_commands_update after session/resume');
      // The commands, and how full the context is: the session's state, not its history.
      const state = ['available_commands_update', 'usage_update'];
      assert.deepEqual(b.of(sessionId).filter((u) => !state.includes(u.sessionUpdate)), [], 'resume replays nothing');

      // load: the replay (checked against the schema like everything else).
      await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
      assert.ok(b.of(sessionId, 'tool_call').length >= 2, 'the replay shows the tool calls');

      const answer = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'and once more' }] });
      assert.equal(answer.stopReason, 'end_turn');
      const later = b.of(sessionId, 'session_info_update').at(-1);
      assert.equal(later.title, undefined, 'the title is told once');
      assert.ok(later.updatedAt);

      await ctx.request(acp.methods.agent.session.close, { sessionId });
      const listed = await ctx.request(acp.methods.agent.session.list, {});
      assert.ok(listed.sessions.some((s) => s.sessionId === sessionId), 'a closed session is still listed');

      // delete: a session of its own, then gone from the list.
      const { sessionId: scratch } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      await ctx.request(acp.methods.agent.session.delete, { sessionId: scratch });
      const after = await ctx.request(acp.methods.agent.session.list, { cwd: ws });
      assert.deepEqual(after.sessions.map((s) => s.sessionId), [sessionId]);
      await assert.rejects(ctx.request(acp.methods.agent.session.load, { sessionId: scratch, cwd: ws, mcpServers: [] }), (err) => err.code === -32002);

      await ctx.request(acp.methods.agent.logout, {});
    }, 'editor B');
    assertSchema(t, a, b);
  } finally {
    const errors = [];
    await stopDaemon(socket).catch((err) => errors.push(err));
    await stopChild(a.relay).catch((err) => errors.push(err));
    await stopChild(b.relay).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});

test('the login through the official ACP SDK: auth_required with HEARTH_SIMULATOR=off and no key, the terminal auth method run as an editor runs it, then sessions work', { timeout: 90_000 }, async (t) => {
  const { home, env, socket } = await hearthEnv(simURL, { HEARTH_SIMULATOR: 'off' });
  const ws = await tempDir('hearth-interop-login-');
  const ed = editor('editor-login', env);
  try {
    await ed.run(async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { auth: { terminal: true } },
      });
      const method = init.authMethods.find((m) => m.type === 'terminal');
      assert.ok(method, JSON.stringify(init.authMethods));
      await assert.rejects(ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }), (err) => {
        assert.equal(err.code, -32000);
        assert.match(err.message, /hearth login/);
        return true;
      });

      // What an editor does with a terminal method: run the agent's command with its args, in a terminal.
      const login = startChild(hearthBin(), ['acp', ...method.args], { env });
      login.child.stdin.end(KEY + '\n');
      const done = await withTimeout(login.exited, 30_000, 'hearth acp login', () => login.out.stderr);
      assert.equal(done.code, 0, `hearth acp login:\n${login.out.stdout}\n${login.out.stderr}`);
      assert.match(login.out.stdout, /uses it now/);
      assert.match(await readFile(path.join(home, '.config', 'hearth', 'env'), 'utf8'), new RegExp(`OPENAI_API_KEY=${KEY}`));

      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'logged in?' }] });
      assert.equal(r.stopReason, 'end_turn');
      const text = ed.of(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('');
      assert.match(text, /You said: logged in\?/);

      await ctx.request(acp.methods.agent.logout, {});
      await assert.rejects(ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }), (err) => err.code === -32000);
    }, 'the login');
    assertSchema(t, ed);
  } finally {
    const errors = [];
    await stopDaemon(socket).catch((err) => errors.push(err));
    await stopChild(ed.relay).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});
