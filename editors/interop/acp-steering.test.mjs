// Steering a running turn from a client the project did not write: the
// official ACP SDK's client sends `_session/steering` (the extension method
// codex-acp and claude-agent-acp define) through `hearth acp` while an
// answer streams from hearth's simulator. The steer is `injected`, reaches
// the simulator as one `response.steer` and no new `response.create`, the
// turn ends `end_turn` with the successor's answer, the next prompt chains
// on the successor, and `session/load` replays the steering text once,
// where it landed. `idleBehavior: "promptRequired"` refuses a steer with no
// turn running, and a `session/prompt` sent during a turn is queued and run
// next. A steer while a tool runs is held by the server
// (`response.steer.pending`) for the one continuation, which carries only
// the tool output. Where there is no WebSocket (a proxy refuses the
// upgrade, so no response.steer), the steer is still injected and the model
// reads the input once, in one more request. Every message hearth sends is
// checked against the SDK's schema.
//
// The simulator runs with -v: one line per answered request (type,
// generate, previous_response_id, outcome), read from its stdout.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { assertSchema, editor } from './acp-editor.mjs';
import { daemonLog, removeDir, shortTempDir, startSim, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';

const text = (t) => [{ type: 'text', text: t }];
const promptRequired = { steering: { idleBehavior: 'promptRequired' } };

/** The simulator's -v lines: one object per answered request. */
function simRequests(sim) {
  return sim.out.stdout
    .split('\n')
    .filter((l) => l.startsWith('request '))
    .map((l) => Object.fromEntries(l.slice('request '.length).split(' ').map((kv) => kv.split('='))));
}
// A create that asks for output: a response.create frame, or a POST (whose line has no type).
const generating = (r) => (r.type === 'response.create' || (r.transport === 'http' && r.type === '')) && r.generate !== 'false';

/**
 * Resolves with the simulator's requests once pred holds of them, checking
 * on every chunk of its stdout (a line is printed once its request is
 * answered, which may be after hearth has read the answer).
 */
function simSaw(sim, pred, what, detail) {
  let onData;
  const seen = new Promise((resolve) => {
    onData = () => {
      const reqs = simRequests(sim);
      if (pred(reqs)) resolve(reqs);
    };
    sim.child.stdout.on('data', onData);
    onData();
  });
  return withTimeout(seen, 10_000, what, detail).finally(() => sim.child.stdout.off('data', onData));
}

test('the official ACP SDK steers a running turn through hearth acp: injected, one response.steer, end_turn, replayed once; promptRequired refuses when idle; a prompt during a turn is queued', { timeout: 90_000 }, async (t) => {
  const key = 'sk-interop-steer-' + randomBytes(6).toString('hex');
  // Paced deltas: a 60-word answer streams for about three seconds.
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key, '-v', '--tokens-per-second', '20']);
  const home = await shortTempDir('hs-');
  const ws = await tempDir('hearth-interop-steer-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, {
    HOME: home,
    HEARTH_SOCKET: socketPath,
    HEARTH_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    OPENAI_BASE_URL: baseURL,
    OPENAI_API_KEY: key,
  });
  const eds = [];
  try {
    const a = editor('hearth acp (steering)', env);
    eds.push(a);
    const diag = () => `hearth acp stderr:\n${a.relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const chunks = (sessionId, from = 0) =>
      a.updates
        .slice(from)
        .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
        .map((u) => u.update.content.text)
        .join('');
    const marks = {};
    const out = await a.run(
      async (ctx) => {
        const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request('session/new', { cwd: ws, mcpServers: [] });
        const prompt = (t) => ctx.request('session/prompt', { sessionId, prompt: text(t) });
        const steer = (t, _meta) => ctx.request('_session/steering', { sessionId, prompt: text(t), ...(_meta ? { _meta } : {}) });

        // Idle, with promptRequired: refused, and no turn starts (_hearth/inspect counts them below).
        const idle = await steer('nothing runs', promptRequired);

        // A long answer; once it streams, steer it.
        marks.p1 = a.updates.length;
        const p1 = prompt('tell me a long story sim:tokens=60');
        await a.waitFor(() => chunks(sessionId, marks.p1).length > 0, 'the first answer to stream');
        const steered = await steer('say banana');
        const p1End = await p1;
        marks.p1Text = chunks(sessionId, marks.p1);
        // The steer's line and the steered response's: what the simulator got for the first turn.
        marks.afterP1 = await simSaw(
          sim,
          (reqs) => reqs.some((r) => r.type === 'response.steer') && reqs.some((r) => generating(r) && r.outcome === 'response.incomplete'),
          "the simulator's record of the steered turn",
          diag,
        );

        // The next prompt chains on the successor.
        const p2End = await prompt('what next');

        // A prompt sent while a turn runs is queued and runs next.
        marks.p3 = a.updates.length;
        let p3Done = false;
        const p3 = prompt('another long story sim:tokens=60').then((r) => ((p3Done = true), r));
        await a.waitFor(() => chunks(sessionId, marks.p3).length > 0, 'the third answer to stream');
        marks.p3RunningAtP4 = !p3Done;
        const p4 = prompt('the queued prompt');
        const order = [];
        const [p3End, p4End] = await Promise.all([p3.then((r) => (order.push('p3'), r)), p4.then((r) => (order.push('p4'), r))]);

        // Idle without promptRequired: the steer starts a turn of its own,
        // whose answer reaches the editor.
        marks.p5 = a.updates.length;
        const started = await steer('a steered start');
        await a.waitFor(() => chunks(sessionId, marks.p5).includes('You said: a steered start'), 'the steered turn to answer');
        const inspect = await ctx.request('_hearth/inspect', { sessionId });
        // Five turns answered: five generating creates recorded (or more, which the assertions report).
        marks.reqs = await simSaw(sim, (reqs) => reqs.filter(generating).length >= 5, "the simulator's record of five turns", diag);
        return { init, sessionId, idle, steered, p1End, p2End, p3End, p4End, order, started, inspect };
      },
      'steering, a prompt, a queued prompt',
      60_000,
    );
    t.diagnostic(`simulator requests: ${JSON.stringify(simRequests(sim).map((r) => [r.type, r.conn, r.generate, r.prev, r.outcome, r.at_us]))}`);
    assertSchema(t, a);

    // initialize advertises steering as codex-acp and claude-agent-acp do.
    assert.equal(out.init._meta?.steering?.supported, true, `initialize _meta: ${JSON.stringify(out.init._meta)}`);
    assert.deepEqual(out.idle, { outcome: 'failed' }, 'promptRequired with no turn running');

    // The steer: injected; the turn ends normally with the successor's answer after the partial one.
    assert.deepEqual(out.steered, { outcome: 'injected' }, diag());
    assert.equal(out.p1End.stopReason, 'end_turn', diag());
    const said = marks.p1Text;
    assert.match(said, /^tok0\b/, `the partial answer: ${JSON.stringify(said)}`);
    assert.doesNotMatch(said, /tok59/, 'the first answer was cut short');
    assert.match(said, /You said: say banana/, `the successor's answer is relayed in the same turn: ${JSON.stringify(said)}`);

    // The simulator: one response.steer, accepted, for the running response; no create for it.
    const reqs = marks.reqs;
    const steers = reqs.filter((r) => r.type === 'response.steer');
    assert.equal(steers.length, 1, JSON.stringify(steers));
    assert.equal(steers[0].outcome, 'response.steer.accepted');
    assert.equal(marks.afterP1.filter(generating).length, 1, `one generating create for the steered turn: ${JSON.stringify(marks.afterP1.filter(generating))}`);
    assert.equal(reqs.filter(generating).length, 5, `one create per turn, none for the steer: ${JSON.stringify(reqs.filter(generating))}`);
    const creates = reqs.filter(generating);
    const steeredID = steers[0].prev;
    assert.equal(creates[0].outcome, 'response.incomplete', 'the steered response ended incomplete');
    // The next prompt continues the successor, not the steered response.
    assert.equal(out.p2End.stopReason, 'end_turn');
    const p2Create = creates[1];
    assert.ok(p2Create.prev !== '-' && p2Create.prev !== steeredID, `the next prompt chains on the successor: ${JSON.stringify(p2Create)} (steered ${steeredID})`);
    const succ = out.inspect.session.requests.find((r) => r.responseId === p2Create.prev);
    t.diagnostic(`hearth's requests: ${JSON.stringify(out.inspect.session.requests.map((r) => [r.turn, r.kind, r.previousResponseId, r.responseId, r.status]))}`);
    assert.equal(succ?.previousResponseId, steeredID, "hearth's record: the successor continues the steered response");
    assert.equal(p2Create.items, '1', 'the next request carries only its own prompt: the steering input is not sent again');

    // The queued prompt: sent while the third turn ran, run after it, both end_turn.
    assert.equal(marks.p3RunningAtP4, true, 'the fourth prompt was sent during the third turn');
    assert.equal(out.p3End.stopReason, 'end_turn');
    assert.equal(out.p4End.stopReason, 'end_turn');
    assert.deepEqual(out.order, ['p3', 'p4'], 'in order');
    const later = chunks(out.sessionId, marks.p3);
    assert.ok(later.lastIndexOf('tok59') >= 0 && later.indexOf('You said: the queued prompt') > later.lastIndexOf('tok59'), `not interleaved: ${JSON.stringify(later)}`);

    assert.deepEqual(out.started, { outcome: 'startedNewTurn' }, 'a steer with no turn running and no promptRequired');

    // hearth's own record: five turns, the refused
    // steer is nowhere, and the committed "say banana" sits between the
    // partial answer and the successor's. (_hearth/inspect lists raw items:
    // steering input is also stored as a pending record the moment hearth
    // accepts it, kept out of the model's view and of the replay.)
    const items = out.inspect.session.items;
    t.diagnostic(`turn 1 items: ${JSON.stringify(items.filter((i) => i.turn === 1).map((i) => [i.seq, i.origin, i.type, JSON.stringify(i.data).slice(0, 60)]))}`);
    assert.equal(out.inspect.session.turnList.length, 5, JSON.stringify(out.inspect.session.turnList));
    assert.ok(!items.some((i) => JSON.stringify(i.data).includes('nothing runs')), 'a refused steer is not stored');
    const t1 = items.filter((i) => i.turn === 1 && i.type === 'message');
    const last = t1.findLastIndex((i) => i.data.role === 'user' && JSON.stringify(i.data).includes('say banana'));
    assert.ok(last > 0, JSON.stringify(t1));
    assert.equal(t1[last - 1].data.role, 'assistant');
    assert.match(JSON.stringify(t1[last - 1].data.content), /tok0/, 'after the partial answer');
    assert.match(JSON.stringify(t1[last + 1]?.data), /You said: say banana/, "before the successor's answer");

    // session/load on another connection replays it once, in place.
    const b = editor('hearth acp (steering, load)', env);
    eds.push(b);
    await b.run(
      (ctx) =>
        ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() => ctx.request('session/load', { sessionId: out.sessionId, cwd: ws, mcpServers: [] })),
      'session/load',
    );
    assertSchema(t, b);
    const replay = b
      .of(out.sessionId)
      .filter((u) => u.sessionUpdate === 'user_message_chunk' || u.sessionUpdate === 'agent_message_chunk')
      .map((u) => [u.sessionUpdate === 'user_message_chunk' ? 'user' : 'agent', u.content.text]);
    // Merge consecutive chunks of one side.
    const turns = [];
    for (const [who, s] of replay) {
      if (turns.length && turns.at(-1)[0] === who) turns.at(-1)[1] += s;
      else turns.push([who, s]);
    }
    t.diagnostic(`replay: ${JSON.stringify(turns.map(([w, s]) => [w, s.slice(0, 40)]))}`);
    assert.equal(turns.filter(([w, s]) => w === 'user' && s.includes('say banana')).length, 1, 'replayed once');
    const at = turns.findIndex(([w, s]) => w === 'user' && s.includes('say banana'));
    assert.equal(turns[at - 1]?.[0], 'agent');
    assert.match(turns[at - 1][1], /^tok0\b/, 'after the partial answer');
    assert.doesNotMatch(turns[at - 1][1], /tok59/);
    assert.equal(turns[at - 2]?.[1], 'tell me a long story sim:tokens=60');
    assert.equal(turns[at + 1]?.[0], 'agent');
    assert.match(turns[at + 1][1], /You said: say banana/, "before the successor's answer");
    assert.equal(turns[at + 2]?.[1], 'what next');
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    for (const e of eds) await stopChild(e.relay).catch((err) => errors.push(err));
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});

test('the official ACP SDK steers while a tool runs: the server holds the input (response.steer.pending) and one continuation carries only the tool output', { timeout: 90_000 }, async (t) => {
  const key = 'sk-interop-steer-' + randomBytes(6).toString('hex');
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key, '-v']);
  const home = await shortTempDir('ht-');
  const ws = await tempDir('hearth-interop-steer-tool-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HOME: home, HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: dataDir, XDG_CONFIG_HOME: path.join(home, 'config'), OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: key });
  const eds = [];
  try {
    const a = editor('hearth acp (steering a tool)', env);
    eds.push(a);
    const diag = () => `hearth acp stderr:\n${a.relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const out = await a.run(async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request('session/new', { cwd: ws, mcpServers: [] });
      const p = ctx.request('session/prompt', { sessionId, prompt: text('run sleep 2') });
      // The command runs: its tool call is in progress.
      await a.waitFor(
        () => a.of(sessionId).some((u) => (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.status === 'in_progress'),
        'the command to run',
      );
      const steered = await ctx.request('_session/steering', { sessionId, prompt: text('say banana') });
      const end = await p;
      const reqs = await simSaw(sim, (r) => r.filter(generating).length >= 2 && r.some((x) => x.type === 'response.steer'), "the simulator's record of the turn", diag);
      return { sessionId, steered, end, reqs };
    }, 'a tool-running turn steered');
    t.diagnostic(`simulator requests: ${JSON.stringify(simRequests(sim).map((r) => [r.type, r.generate, r.prev, r.items, r.outcome]))}`);
    assertSchema(t, a);
    assert.deepEqual(out.steered, { outcome: 'injected' }, diag());
    assert.equal(out.end.stopReason, 'end_turn', diag());
    const steers = out.reqs.filter((r) => r.type === 'response.steer');
    const creates = out.reqs.filter(generating);
    assert.equal(steers.length, 1, JSON.stringify(steers));
    assert.equal(steers[0].outcome, 'response.steer.accepted', 'held by the server for the continuation');
    assert.equal(steers[0].prev, creates[0].outcome, 'aimed at the response that called the tool');
    assert.equal(creates.length, 2, `the call, then one continuation: ${JSON.stringify(creates)}`);
    assert.equal(creates[1].prev, creates[0].outcome, 'the continuation chains on the call');
    assert.equal(creates[1].items, '1', 'the continuation carries only the tool output, not the steering input again');

    // session/load replays "say banana" once, after the tool call.
    const b = editor('hearth acp (steering a tool, load)', env);
    eds.push(b);
    await b.run(
      (ctx) => ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() => ctx.request('session/load', { sessionId: out.sessionId, cwd: ws, mcpServers: [] })),
      'session/load',
    );
    assertSchema(t, b);
    const replay = b.of(out.sessionId).map((u) => [u.sessionUpdate, u.content?.text ?? u.title ?? '']);
    t.diagnostic(`replay: ${JSON.stringify(replay.map(([k, s]) => [k, String(s).slice(0, 40)]))}`);
    const bananas = replay.filter(([k, s]) => k === 'user_message_chunk' && String(s).includes('say banana'));
    assert.equal(bananas.length, 1, 'replayed once');
    const at = replay.findIndex(([k, s]) => k === 'user_message_chunk' && String(s).includes('say banana'));
    assert.ok(replay.slice(0, at).some(([k]) => k === 'tool_call'), 'after the tool call');
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    for (const e of eds) await stopChild(e.relay).catch((err) => errors.push(err));
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});

/**
 * An HTTP proxy to target (the simulator's base URL) that answers every
 * WebSocket upgrade with 426, as an endpoint without the WebSocket mode
 * does, and keeps the body of every request it forwards.
 */
async function httpOnlyProxy(target) {
  const to = new URL(target);
  const seen = { upgrades: 0, bodies: [] };
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') seen.bodies.push({ url: req.url, body: body.toString('utf8') });
      const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', (err) => res.destroy(err));
      up.end(body);
    });
  });
  srv.on('upgrade', (req, socket) => {
    seen.upgrades++;
    socket.end('HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    baseURL: `http://127.0.0.1:${srv.address().port}/v1`,
    seen,
    close: () => {
      srv.closeAllConnections?.();
      return new Promise((resolve) => srv.close(resolve));
    },
  };
}

test('the official ACP SDK steers a turn over HTTP (no WebSocket, no response.steer): injected, and the model reads the input once, in one more request', { timeout: 90_000 }, async (t) => {
  const key = 'sk-interop-steer-' + randomBytes(6).toString('hex');
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key, '-v', '--tokens-per-second', '20']);
  const proxy = await httpOnlyProxy(baseURL);
  const home = await shortTempDir('hh-');
  const ws = await tempDir('hearth-interop-steer-http-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HOME: home, HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: dataDir, XDG_CONFIG_HOME: path.join(home, 'config'), OPENAI_BASE_URL: proxy.baseURL, OPENAI_API_KEY: key });
  const eds = [];
  try {
    const a = editor('hearth acp (steering over HTTP)', env);
    eds.push(a);
    const diag = () => `hearth acp stderr:\n${a.relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const said = (sessionId, from) =>
      a.updates
        .slice(from)
        .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
        .map((u) => u.update.content.text)
        .join('');
    const out = await a.run(async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request('session/new', { cwd: ws, mcpServers: [] });
      const from = a.updates.length;
      const p = ctx.request('session/prompt', { sessionId, prompt: text('tell me a long story sim:tokens=60') });
      await a.waitFor(() => said(sessionId, from).length > 0, 'the answer to stream');
      const steered = await ctx.request('_session/steering', { sessionId, prompt: text('say banana') });
      const end = await p;
      const reqs = await simSaw(sim, (r) => r.filter(generating).length >= 2, "the simulator's record of two requests", diag);
      return { sessionId, steered, end, text: said(sessionId, from), reqs };
    }, 'a turn steered over HTTP');
    t.diagnostic(`simulator requests: ${JSON.stringify(simRequests(sim).map((r) => [r.transport, r.type, r.generate, r.prev, r.items, r.outcome]))}`);
    assertSchema(t, a);
    assert.ok(proxy.seen.upgrades > 0, 'the WebSocket was refused');
    assert.deepEqual(out.steered, { outcome: 'injected' }, diag());
    assert.equal(out.end.stopReason, 'end_turn', diag());
    assert.match(out.text, /tok59/, 'over HTTP the answer runs to its end');
    assert.match(out.text, /You said: say banana/, 'then the model answers the steering input, in the same turn');
    assert.equal(out.reqs.filter((r) => r.type === 'response.steer').length, 0);
    const creates = out.reqs.filter(generating);
    assert.ok(creates.every((r) => r.transport === 'http'), JSON.stringify(creates));
    assert.equal(creates.length, 2, `the answer, then one request for the steering input: ${JSON.stringify(creates)}`);
    // What the model was sent: the steering input in the second request only, once.
    const bodies = proxy.seen.bodies.filter((b) => /\/responses$/.test(b.url)).map((b) => JSON.parse(b.body)).filter((b) => b.generate !== false);
    const count = (b) => (b.input ?? []).filter((i) => i.role === 'user' && JSON.stringify(i.content).includes('say banana')).length;
    assert.deepEqual(bodies.map(count), [0, 1], 'the steering input reaches the model once');

    const b = editor('hearth acp (steering over HTTP, load)', env);
    eds.push(b);
    await b.run(
      (ctx) => ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() => ctx.request('session/load', { sessionId: out.sessionId, cwd: ws, mcpServers: [] })),
      'session/load',
    );
    assertSchema(t, b);
    const replay = b.of(out.sessionId).filter((u) => u.sessionUpdate === 'user_message_chunk').map((u) => u.content.text);
    assert.deepEqual(replay, ['tell me a long story sim:tokens=60', 'say banana'], 'replayed once');
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    for (const e of eds) await stopChild(e.relay).catch((err) => errors.push(err));
    await proxy.close();
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});

test('the official ACP SDK steers a turn whose server refuses steering (hearth sim --no-steering): injected, and the model reads the input once, in one more request', { timeout: 90_000 }, async (t) => {
  const key = 'sk-interop-steer-' + randomBytes(6).toString('hex');
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key, '-v', '--tokens-per-second', '20', '--no-steering']);
  const home = await shortTempDir('hh-');
  const ws = await tempDir('hearth-interop-steer-refused-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HOME: home, HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: dataDir, XDG_CONFIG_HOME: path.join(home, 'config'), OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: key });
  const eds = [];
  try {
    const a = editor('hearth acp (steering refused)', env);
    eds.push(a);
    const diag = () => `hearth acp stderr:\n${a.relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const said = (sessionId, from) =>
      a.updates
        .slice(from)
        .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
        .map((u) => u.update.content.text)
        .join('');
    const out = await a.run(async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request('session/new', { cwd: ws, mcpServers: [] });
      const from = a.updates.length;
      const p = ctx.request('session/prompt', { sessionId, prompt: text('tell me a long story sim:tokens=60') });
      await a.waitFor(() => said(sessionId, from).length > 0, 'the answer to stream');
      const steered = await ctx.request('_session/steering', { sessionId, prompt: text('say banana') });
      const end = await p;
      const reqs = await simSaw(sim, (r) => r.filter(generating).length >= 2, "the simulator's record of two requests", diag);
      return { sessionId, steered, end, text: said(sessionId, from), reqs };
    }, 'a turn steered on a server that refuses steering');
    t.diagnostic(`simulator requests: ${JSON.stringify(simRequests(sim).map((r) => [r.transport, r.type, r.generate, r.prev, r.items, r.outcome]))}`);
    assertSchema(t, a);
    assert.deepEqual(out.steered, { outcome: 'injected' }, diag());
    assert.equal(out.end.stopReason, 'end_turn', diag());
    assert.equal(out.reqs.filter((r) => r.type === 'response.steer').length, 1, 'hearth tried response.steer once');
    assert.match(out.text, /tok59/, 'refused, the answer runs to its end');
    assert.equal(out.text.split('You said: say banana').length - 1, 1, `the model answers the steering input once: ${out.text}`);
    const creates = out.reqs.filter(generating);
    assert.equal(creates.length, 2, `the answer, then one request for the steering input: ${JSON.stringify(creates)}`);
    assert.notEqual(creates[1].prev, '-', 'the request for the steering input continues the answer');

    const b = editor('hearth acp (steering refused, load)', env);
    eds.push(b);
    await b.run(
      (ctx) => ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() => ctx.request('session/load', { sessionId: out.sessionId, cwd: ws, mcpServers: [] })),
      'session/load',
    );
    assertSchema(t, b);
    const replay = b.of(out.sessionId).filter((u) => u.sessionUpdate === 'user_message_chunk').map((u) => u.content.text);
    assert.deepEqual(replay, ['tell me a long story sim:tokens=60', 'say banana'], 'replayed once');
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    for (const e of eds) await stopChild(e.relay).catch((err) => errors.push(err));
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});
