// ACP 1.34's session capabilities against the official SDK's client: a
// client that advertises session.compaction and session.notices is told of
// the transport as `notice`s and of a compaction as `compaction_update` and
// `compaction_summary_chunk`, live and (compactions only) in session/load's
// replay; every message hearth sends validates against the SDK 2.4.0 schema.
// The model is hearth's simulator behind a proxy written here that refuses
// the WebSocket upgrade (426), so hearth falls back to HTTP and says so.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';

import { SchemaCheck } from './schema-check.mjs';
import { daemonLog, hearthBin, removeDir, shortTempDir, startChild, startSim, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';

const CAPS = { session: { compaction: {}, notices: {} } };

/**
 * An HTTP proxy to target (the simulator's base URL) that answers every
 * WebSocket upgrade with 426, as an endpoint without the WebSocket mode does.
 */
async function refusingProxy(target) {
  const to = new URL(target);
  const seen = { upgrades: 0, requests: 0 };
  const srv = http.createServer((req, res) => {
    seen.requests++;
    const up = http.request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', (err) => res.destroy(err));
    req.pipe(up);
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

/** A `hearth acp` relay and an SDK client on it that records the session/updates, schema-checked. */
async function connect(env, name) {
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  await relay.spawned;
  const updates = [];
  const app = acp.client({ name }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  });
  const check = new SchemaCheck(`hearth acp (${name})`);
  const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
  return { relay, updates, check, stream: acp.ndJsonStream(writable, readable), app };
}

test('a client advertising session.compaction and session.notices gets notices and compaction updates, schema-valid, and session/load replays the compaction', { timeout: 90_000 }, async (t) => {
  const key = 'sk-interop-sim-' + randomBytes(6).toString('hex');
  const { sim, baseURL, diag: simDiag } = await startSim(['--api-key', key]);
  const proxy = await refusingProxy(baseURL);
  const home = await shortTempDir('hn-');
  const ws = await tempDir('hearth-interop-notices-');
  const socketPath = path.join(home, 's');
  const dataDir = path.join(home, 'd');
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_') && !k.startsWith('XDG_')),
  );
  Object.assign(env, { HEARTH_SOCKET: socketPath, HEARTH_DATA_DIR: dataDir, XDG_CONFIG_HOME: path.join(home, 'config'), OPENAI_BASE_URL: proxy.baseURL, OPENAI_API_KEY: key });
  const clients = [];
  try {
    const a = await connect(env, 'hearth-interop-notices');
    clients.push(a);
    const diag = () => `hearth acp stderr:\n${a.relay.out.stderr}\ndaemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
    const marks = {};
    const { sessionId, first, compacted } = await withTimeout(
      a.app.connectWith(a.stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: CAPS });
        const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
        const prompt = (text) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
        const first = await prompt('remember the word heliotrope');
        marks.compact = a.updates.length;
        const compacted = await prompt('/compact');
        return { sessionId, first, compacted };
      }),
      45_000,
      'a prompt and /compact',
      diag,
    );
    t.diagnostic(`session/update kinds: ${a.updates.map((u) => u.sessionUpdate).join(', ')}`);
    t.diagnostic(`schema-checked: ${a.check.summary()}`);
    assert.deepEqual(a.check.violations, [], 'messages that break the ACP schema');
    assert.ok(proxy.seen.upgrades > 0 && proxy.seen.requests > 0, `the upgrade was refused, HTTP served: ${JSON.stringify(proxy.seen)}`);
    assert.equal(first.stopReason, 'end_turn', diag());
    assert.equal(compacted.stopReason, 'end_turn', diag());

    // The fallback to HTTP: a notice, not text in the answer.
    const notices = a.updates.filter((u) => u.sessionUpdate === 'notice');
    assert.equal(notices.length, 1, JSON.stringify(a.updates));
    assert.equal(notices[0].severity, 'warning');
    assert.match(notices[0].title, /HTTP/);
    const said = a.updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
    assert.doesNotMatch(said, /hearth:/, 'no notice in the answer');

    // /compact: in progress, the summary, completed; one id.
    const comp = a.updates.slice(marks.compact).filter((u) => u.sessionUpdate.startsWith('compaction_'));
    assert.deepEqual(
      comp.map((u) => (u.sessionUpdate === 'compaction_update' ? u.status : 'summary')),
      ['in_progress', 'summary', 'completed'],
      JSON.stringify(comp),
    );
    const ids = new Set(comp.map((u) => u.compactionId));
    assert.equal(ids.size, 1, 'one compaction id');
    assert.equal(comp[1].content.type, 'text');
    assert.ok(comp[1].content.text.length > 0, 'the summary has text');

    // session/load on another connection shows the compaction again, and
    // no notice (notices are live only).
    const b = await connect(env, 'hearth-interop-notices-load');
    clients.push(b);
    await withTimeout(
      b.app.connectWith(b.stream, async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: CAPS });
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
      }),
      30_000,
      'session/load',
      diag,
    );
    t.diagnostic(`replayed kinds: ${b.updates.map((u) => u.sessionUpdate).join(', ')}`);
    assert.deepEqual(b.check.violations, [], 'messages that break the ACP schema');
    assert.equal(b.updates.filter((u) => u.sessionUpdate === 'notice').length, 0, 'no notice replayed');
    const replayed = b.updates.filter((u) => u.sessionUpdate.startsWith('compaction_'));
    assert.deepEqual(
      replayed.map((u) => `${u.sessionUpdate}:${u.status ?? u.content.text}:${u.compactionId}`),
      comp.slice(1).map((u) => `${u.sessionUpdate}:${u.status ?? u.content.text}:${u.compactionId}`),
      'the compaction as it ended live',
    );
  } finally {
    const errors = [];
    await stopDaemon(socketPath).catch((err) => errors.push(err));
    for (const c of clients) await stopChild(c.relay).catch((err) => errors.push(err));
    await proxy.close();
    await stopChild(sim).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});
