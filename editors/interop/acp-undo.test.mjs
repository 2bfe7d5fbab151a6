// Acceptance test: checkpoints, /undo and /rewind driven by a client the
// project did not write — the official ACP SDK — through `hearth acp`,
// against hearth's own simulator, whose scripted model makes several
// different tool calls in one turn (sim:steps). The files are checked on
// disk; every message hearth sends is checked against the SDK's stable
// schema.json. A recording proxy written here (with the `ws` package) sits
// between hearth and the simulator, so the test reads what the model was
// told after an undo and what hearth sent after a rewind.
//
// The model is one hearth has no profile for, so its tools are plain
// functions (apply_patch taking {input}, shell): sim:steps scripts function
// calls only, and the default model's profile offers apply_patch as a
// custom (freeform) tool, which the real API answers with custom tool calls.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';
import { WebSocket, WebSocketServer } from 'ws';

import { daemonLog, hearthBin, removeDir, rpcSocket, shortTempDir, startChild, startSim, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';
import { SchemaCheck } from './schema-check.mjs';

const API_KEY = 'sk-interop-undo-' + randomBytes(6).toString('hex');

let sim; // hearth sim, shared by the tests
let proxy; // between hearth and the sim: what hearth sent
let baseURL; // the proxy's
let simDiag;
let home; // the daemon's socket and data directory, short path
const workspaces = [];
const relays = [];

before(async () => {
  let simURL;
  ({ sim, baseURL: simURL, diag: simDiag } = await startSim(['--api-key', API_KEY]));
  proxy = new RecordingProxy(simURL);
  baseURL = await proxy.start();
  home = await shortTempDir('hu-');
});

after(async () => {
  // The daemon outlives `hearth acp`: stop it first, then the relays.
  const errors = [];
  if (home) await stopDaemon(path.join(home, 's')).catch((err) => errors.push(err));
  for (const r of relays) await stopChild(r).catch((err) => errors.push(err));
  await proxy?.close();
  await stopChild(sim).catch((err) => errors.push(err));
  for (const ws of workspaces) await removeDir(ws);
  await removeDir(home);
  if (errors.length) throw errors[0];
});

/**
 * RecordingProxy forwards hearth's Responses traffic to the simulator
 * unchanged — WebSocket frames both ways, plain HTTP requests — and keeps
 * every response.create hearth sent (`creates`, in order). It lives as long
 * as this file's tests.
 */
class RecordingProxy {
  constructor(target) {
    this.target = new URL(target); // http://127.0.0.1:PORT/v1
    this.creates = [];
    this.responseOf = new Map(); // a create → the id of the response the simulator made of it
    this.upstreams = new Set();
    this.http = http.createServer((req, res) => {
      const up = http.request(
        { host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers: req.headers },
        (upRes) => {
          res.writeHead(upRes.statusCode, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.http.on('upgrade', (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (client) => this.#pipe(req, client));
    });
  }

  #pipe(req, client) {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k === 'authorization' || k.startsWith('openai-')));
    const upstream = new WebSocket(`ws://${this.target.host}${req.url}`, { headers });
    this.upstreams.add(upstream);
    const early = []; // frames hearth sent before the upstream opened
    const waiting = new Map(); // lane (stream_id) → its creates not yet answered, in order
    upstream.on('open', () => early.splice(0).forEach((f) => upstream.send(f)));
    client.on('message', (data) => {
      const text = data.toString('utf8');
      try {
        const ev = JSON.parse(text);
        if (ev.type === 'response.create') {
          this.creates.push(ev);
          const lane = ev.stream_id ?? '';
          waiting.set(lane, [...(waiting.get(lane) ?? []), ev]);
        }
      } catch {
        // not ours to judge: the simulator answers it
      }
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else early.push(text);
    });
    upstream.on('message', (data) => {
      const text = data.toString('utf8');
      try {
        // A lane's responses come in the order of its requests.
        const ev = JSON.parse(text);
        const lane = ev.stream_id ?? '';
        if (ev.type === 'response.created' && waiting.get(lane)?.length) this.responseOf.set(waiting.get(lane).shift(), ev.response?.id);
        if (ev.type === 'error' && waiting.get(lane)?.length) waiting.get(lane).shift();
      } catch {
        // forwarded as it is
      }
      client.send(text);
    });
    upstream.on('close', () => client.close());
    upstream.on('error', () => client.terminate());
    client.on('close', () => upstream.close());
    client.on('error', () => upstream.terminate());
  }

  /** The response.create requests of session id (its prompt_cache_key), from index `from` of all. */
  of(id, from = 0) {
    return this.creates.slice(from).filter((e) => e.prompt_cache_key === id);
  }

  async start() {
    this.http.listen(0, '127.0.0.1');
    await once(this.http, 'listening');
    return `http://127.0.0.1:${this.http.address().port}${this.target.pathname}`;
  }

  async close() {
    for (const c of this.wss.clients) c.terminate();
    for (const u of this.upstreams) u.terminate();
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise((resolve) => this.http.close(resolve));
  }
}

/** The text of a message input item (a string, or parts with text). */
function says(item) {
  if (typeof item.content === 'string') return item.content;
  return (item.content ?? []).map((p) => p.text ?? '').join('');
}

/** A fresh workspace holding files (name → text). */
async function workspace(files) {
  const ws = await tempDir('hearth-interop-undo-');
  workspaces.push(ws);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(ws, name), text);
  return ws;
}

/** A prompt whose scripted model makes the calls steps ([tool, args] pairs) one after the other in one turn. */
function steps(...calls) {
  // sim:steps takes its JSON up to the first space: spaces inside strings are escaped.
  return 'go sim:steps=' + JSON.stringify(calls).replaceAll(' ', '\\u0020');
}

/** The paths an answer lists after "what: " (a sentence "what: p1, p2."), sorted; [] when absent. */
function listed(said, what) {
  const at = said.indexOf(`${what}: `);
  if (at < 0) return [];
  const rest = said.slice(at + what.length + 2);
  return rest.slice(0, rest.search(/\.(\s|$)/)).split(', ').sort();
}

/** The text of ws/rel, or null when it does not exist. */
async function fileText(ws, rel) {
  try {
    return await readFile(path.join(ws, rel), 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Runs fn with an SDK connection through a new `hearth acp` relay to the
 * daemon of this file (auto-started by the first relay): fn gets
 * {ctx, prompt, said, updates, newSession}. Every message hearth sends is
 * schema-checked; the violations are asserted empty after fn.
 */
async function connect(name, fn, ms = 60_000) {
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, {
    HEARTH_SOCKET: path.join(home, 's'),
    HEARTH_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    OPENAI_BASE_URL: baseURL,
    OPENAI_API_KEY: API_KEY,
    HEARTH_MODEL: 'interop-undo-model',
  });
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  relays.push(relay);
  await relay.spawned;
  const updates = [];
  const app = acp.client({ name }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
  });
  const check = new SchemaCheck(`hearth acp (${name})`);
  const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
  const stream = acp.ndJsonStream(writable, readable);
  const diag = () =>
    `hearth acp stderr:\n${relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}\nschema: ${check.violations.join('\n')}`;
  try {
    const out = await withTimeout(
      app.connectWith(stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const h = {
          ctx,
          updates,
          diag,
          /** A new session in ws, in full-auto mode: no tool call asks. */
          async newSession(ws) {
            const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
            await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'full-auto' });
            return sessionId;
          },
          prompt: (sessionId, text) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }),
          /** The agent's text of session's updates from index `from` on. */
          said: (sessionId, from = 0) =>
            updates
              .slice(from)
              .filter((u) => u.sessionId === sessionId)
              .map((u) => u.update)
              .filter((u) => u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text')
              .map((u) => u.content.text)
              .join(''),
        };
        return fn(h);
      }),
      ms,
      name,
      diag,
    );
    assert.deepEqual(check.violations, [], 'messages that break the ACP schema');
    assert.ok(check.checked.get('SessionNotification') > 0, `the updates were checked: ${check.summary()}`);
    return out;
  } finally {
    await stopChild(relay);
  }
}

test('/undo puts back a turn that wrote a file, patched another and ran a command that created a third and deleted a fourth', { timeout: 90_000 }, async (t) => {
  const ws = await workspace({ 'a.txt': 'alpha before\n', 'b.txt': 'one\ntwo\nthree\n', 'd.sh': '#!/bin/sh\necho dee\n' });
  await chmod(path.join(ws, 'd.sh'), 0o751);
  const patch = '*** Begin Patch\n*** Update File: b.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n';
  await connect('undo', async (h) => {
    const id = await h.newSession(ws);
    const turn = await h.prompt(
      id,
      steps(['write_file', { path: 'a.txt', content: 'alpha written\n' }], ['apply_patch', { input: patch }], ['shell', { command: 'touch c && rm d.sh' }]),
    );
    assert.equal(turn.stopReason, 'end_turn', h.diag());
    // The turn did all four things.
    assert.equal(await fileText(ws, 'a.txt'), 'alpha written\n');
    assert.equal(await fileText(ws, 'b.txt'), 'one\nTWO\nthree\n');
    assert.equal(await fileText(ws, 'c'), '');
    assert.equal(await fileText(ws, 'd.sh'), null);
    const calls = h.updates.filter((u) => u.update.sessionUpdate === 'tool_call').map((u) => u.update.name);
    assert.deepEqual(calls, ['write_file', 'apply_patch', 'shell'], 'the three calls of the turn');

    const from = h.updates.length;
    const undone = await h.prompt(id, '/undo');
    assert.equal(undone.stopReason, 'end_turn', h.diag());
    const said = h.said(id, from);
    t.diagnostic(`/undo answered: ${said}`);
    assert.doesNotMatch(said, /You said: \/undo/, 'the model was not prompted with /undo');
    assert.match(said, /Undid the file changes/, said);
    assert.deepEqual(listed(said, 'Restored'), ['a.txt', 'b.txt', 'd.sh'], said);
    assert.deepEqual(listed(said, 'Removed (created by that turn)'), ['c'], said);
    assert.doesNotMatch(said, /conflicts|Not restorable|Could not be restored/, said);

    // On disk: everything as before the turn.
    assert.equal(await fileText(ws, 'a.txt'), 'alpha before\n');
    assert.equal(await fileText(ws, 'b.txt'), 'one\ntwo\nthree\n');
    assert.equal(await fileText(ws, 'c'), null, 'the file the command created is gone');
    assert.equal(await fileText(ws, 'd.sh'), '#!/bin/sh\necho dee\n', 'the file the command deleted is back');
    assert.equal((await stat(path.join(ws, 'd.sh'))).mode & 0o777, 0o751, 'with its mode');

    // A second undo has nothing left to undo, and says so.
    const again = h.updates.length;
    await h.prompt(id, '/undo');
    assert.match(h.said(id, again), /Nothing to undo/i, h.said(id, again));
    // The session goes on, and the model is told what was undone: a
    // developer message before the next prompt.
    const sent = proxy.creates.length;
    const next = await h.prompt(id, 'what now');
    assert.equal(next.stopReason, 'end_turn');
    const ask = proxy.of(id, sent).find((e) => JSON.stringify(e.input).includes('what now'));
    assert.ok(ask, `the request of the prompt after the undo: ${JSON.stringify(proxy.of(id, sent))}`);
    const notes = ask.input.filter((it) => it.role === 'developer').map(says);
    const note = notes.find((n) => n.includes('The user undid (/undo)'));
    assert.ok(note, `the model is told of the undo: ${JSON.stringify(ask.input)}`);
    assert.match(note, /Removed \(that turn created them\): c\b/, note);
    for (const f of ['a.txt', 'b.txt', 'd.sh']) assert.ok(note.includes(f), `the note names ${f}: ${note}`);
    assert.equal(notes.filter((n) => n.includes('The user undid')).length, 1, 'told once, not twice (the second undo undid nothing)');
  });
});

test('/undo leaves a file the user edited after the turn as the user left it, named as a conflict, and restores the rest', { timeout: 90_000 }, async (t) => {
  const ws = await workspace({ 'notes.txt': 'the original notes\n', 'other.txt': 'other before\n' });
  await connect('undo-conflict', async (h) => {
    const id = await h.newSession(ws);
    const turn = await h.prompt(id, steps(['write_file', { path: 'notes.txt', content: "the model's notes\n" }], ['write_file', { path: 'other.txt', content: 'other written\n' }]));
    assert.equal(turn.stopReason, 'end_turn', h.diag());
    assert.equal(await fileText(ws, 'notes.txt'), "the model's notes\n");

    await writeFile(path.join(ws, 'notes.txt'), "the user's own notes\n"); // the user edits it, outside hearth
    const from = h.updates.length;
    const undone = await h.prompt(id, '/undo');
    assert.equal(undone.stopReason, 'end_turn', h.diag());
    const said = h.said(id, from);
    t.diagnostic(`/undo answered: ${said}`);
    assert.deepEqual(listed(said, 'Left as they are, changed since that turn (conflicts)'), ['notes.txt'], said);
    assert.deepEqual(listed(said, 'Restored'), ['other.txt'], said);
    assert.match(said, /-the model's notes\n\+the user's own notes/, 'what differs is shown');
    assert.equal(await fileText(ws, 'notes.txt'), "the user's own notes\n", "the user's text is kept");
    assert.equal(await fileText(ws, 'other.txt'), 'other before\n');
  });
});

test('/rewind 1 after three turns puts the files back as before the first; the session goes on; a second editor sees the turns numbered and rewound', { timeout: 120_000 }, async (t) => {
  const ws = await workspace({ 'kept.txt': 'kept before\n' });
  let id;
  await connect('rewind', async (h) => {
    id = await h.newSession(ws);
    const turns = [
      steps(['write_file', { path: 'kept.txt', content: 'turn one\n' }]),
      steps(['write_file', { path: 'second.txt', content: 'turn two\n' }]),
      steps(['write_file', { path: 'third.txt', content: 'turn three\n' }]),
    ];
    for (const [i, p] of turns.entries()) {
      const r = await h.prompt(id, p);
      assert.equal(r.stopReason, 'end_turn', h.diag());
      assert.equal(r._meta?.['hearth/turn'], i + 1, `turn ${i + 1}'s answer: ${JSON.stringify(r)}`);
    }
    assert.equal(await fileText(ws, 'kept.txt'), 'turn one\n');
    assert.equal(await fileText(ws, 'second.txt'), 'turn two\n');
    assert.equal(await fileText(ws, 'third.txt'), 'turn three\n');

    const from = h.updates.length;
    const sent = proxy.creates.length;
    const rewound = await h.prompt(id, '/rewind 1');
    assert.equal(rewound.stopReason, 'end_turn', h.diag());
    const said = h.said(id, from);
    t.diagnostic(`/rewind 1 answered: ${said}`);
    assert.match(said, /Rewound this session to before turn 1/, said);
    assert.deepEqual(listed(said, 'Restored'), ['kept.txt'], said);
    assert.deepEqual(listed(said, 'Removed (created by those turns)'), ['second.txt', 'third.txt'], said);
    assert.equal(await fileText(ws, 'kept.txt'), 'kept before\n');
    assert.equal(await fileText(ws, 'second.txt'), null);
    assert.equal(await fileText(ws, 'third.txt'), null);

    const afterFrom = h.updates.length;
    const next = await h.prompt(id, 'after the rewind');
    assert.equal(next.stopReason, 'end_turn', h.diag());
    assert.equal(next._meta?.['hearth/turn'], 4, JSON.stringify(next));
    assert.match(h.said(id, afterFrom), /You said: after the rewind/);

    // What hearth sent the model since /rewind: one full request without the
    // later turns (the re-warm, chained on nothing), then the prompt chained
    // on it with only the new message.
    const since = proxy.of(id, sent);
    assert.equal(since.length, 2, `requests after /rewind 1: ${JSON.stringify(since, null, 1)}`);
    const [rewarm, ask] = since;
    assert.ok(!rewarm.previous_response_id, `the re-warm is full: previous_response_id ${rewarm.previous_response_id}`);
    const full = JSON.stringify(rewarm.input);
    for (const gone of ['sim:steps', 'turn one', 'second.txt', 'third.txt']) assert.ok(!full.includes(gone), `the re-warm holds no ${gone}: ${full}`);
    assert.equal(rewarm.generate, false, 'the re-warm generates nothing');
    assert.ok(proxy.responseOf.get(rewarm), 'the re-warm was answered');
    assert.equal(ask.previous_response_id, proxy.responseOf.get(rewarm), 'the prompt chains on the re-warm');
    assert.equal(ask.input.filter((it) => it.role === 'user').length, 1, JSON.stringify(ask.input));
    assert.equal(says(ask.input.at(-1)), 'after the rewind');
  });

  // A second editor loads the session: the history keeps the three turns, marked rewound.
  await connect('rewind-load', async (h) => {
    await h.ctx.request(acp.methods.agent.session.load, { sessionId: id, cwd: ws, mcpServers: [] });
    const users = h.updates
      .filter((u) => u.sessionId === id && u.update.sessionUpdate === 'user_message_chunk' && u.update.content?.type === 'text')
      .map((u) => u.update);
    const got = users.map((u) => [u.content.text.split(' ')[0], u._meta?.['hearth/turn'], u._meta?.['hearth/rewound'] === true]);
    assert.deepEqual(
      got,
      [
        ['go', 1, true],
        ['go', 2, true],
        ['go', 3, true],
        ['after', 4, false],
      ],
      `the replayed user messages: ${JSON.stringify(users)}`,
    );
  });
});

test('after a SIGKILL of the daemon between the turn and the undo, a new daemon undoes the turn, its command included', { timeout: 120_000 }, async (t) => {
  const ws = await workspace({ 'a.txt': 'alpha before\n', 'd.txt': 'dee before\n' });
  let id;
  await connect('before-kill', async (h) => {
    id = await h.newSession(ws);
    const turn = await h.prompt(id, steps(['write_file', { path: 'a.txt', content: 'alpha written\n' }], ['shell', { command: 'touch c && rm d.txt' }]));
    assert.equal(turn.stopReason, 'end_turn', h.diag());
  });
  assert.equal(await fileText(ws, 'a.txt'), 'alpha written\n');
  assert.equal(await fileText(ws, 'd.txt'), null);

  // SIGKILL: no shutdown of any kind. The daemon is not our child: its pid
  // comes from _hearth/status, its death from the socket hanging up.
  const rpc = await rpcSocket(path.join(home, 's'));
  try {
    await rpc.call('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { pid } = await rpc.call('_hearth/status', {});
    assert.ok(Number.isInteger(pid) && pid > 0, `a pid: ${pid}`);
    process.kill(pid, 'SIGKILL');
    await withTimeout(rpc.closed, 10_000, `daemon ${pid} to hang up after SIGKILL`);
  } finally {
    rpc.end();
  }

  // A new relay starts a new daemon on the same data.
  await connect('after-kill', async (h) => {
    await h.ctx.request(acp.methods.agent.session.load, { sessionId: id, cwd: ws, mcpServers: [] });
    const from = h.updates.length;
    const undone = await h.prompt(id, '/undo');
    assert.equal(undone.stopReason, 'end_turn', h.diag());
    const said = h.said(id, from);
    t.diagnostic(`/undo after the SIGKILL answered: ${said}`);
    assert.deepEqual(listed(said, 'Restored'), ['a.txt', 'd.txt'], said);
    assert.deepEqual(listed(said, 'Removed (created by that turn)'), ['c'], said);
  });
  assert.equal(await fileText(ws, 'a.txt'), 'alpha before\n');
  assert.equal(await fileText(ws, 'd.txt'), 'dee before\n');
  assert.equal(await fileText(ws, 'c'), null);
});
