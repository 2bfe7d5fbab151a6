// An editor for the interop tests: the official ACP SDK's client on a
// `hearth acp` relay, every message hearth sends checked against the
// official schema (schema-check.mjs), and the environment a test's hearth
// runs in. Knows hearth only through its command line, its environment and
// ACP.

import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import * as acp from '@agentclientprotocol/sdk';

import { hearthBin, shortTempDir, startChild, withTimeout } from './helpers.mjs';
import { SchemaCheck } from './schema-check.mjs';

/** An environment of its own: socket, data, HOME (the env file), the simulator at simURL as the model API. */
export async function hearthEnv(simURL, extra) {
  const home = await shortTempDir('hl-');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_') && !k.startsWith('HEARTH_')));
  Object.assign(env, {
    HOME: home,
    HEARTH_SOCKET: path.join(home, 's'),
    HEARTH_DATA_DIR: path.join(home, 'd'),
    OPENAI_BASE_URL: simURL,
    ...extra,
  });
  return { home, env, socket: env.HEARTH_SOCKET, dataDir: env.HEARTH_DATA_DIR };
}

/**
 * An editor: the official SDK's client on a `hearth acp` relay, every
 * message hearth sends checked against the schema. It records the updates,
 * the fs calls, and answers permission requests with allow_once; files it
 * is asked to write are written as an editor writes them (a missing one
 * created with its directories).
 */
export function editor(name, env) {
  const relay = startChild(hearthBin(), ['acp'], { env, keepStdout: false });
  const check = new SchemaCheck(name);
  const ed = { relay, check, updates: [], fsCalls: [], permissions: 0, waiters: [] };
  const notify = () => {
    for (const w of [...ed.waiters]) if (w.pred()) w.resolve();
  };
  ed.waitFor = (pred, what, ms = 20_000) =>
    pred()
      ? Promise.resolve()
      : withTimeout(new Promise((resolve) => ed.waiters.push({ pred, resolve })), ms, what, () => relay.out.stderr);
  ed.app = acp
    .client({ name })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      ed.updates.push(params);
      notify();
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      ed.permissions++;
      const allow = params.options.find((o) => o.kind === 'allow_once');
      return { outcome: { outcome: 'selected', optionId: allow.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      ed.fsCalls.push({ method: 'read', path: params.path });
      return { content: await readFile(params.path, 'utf8') };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      ed.fsCalls.push({ method: 'write', path: params.path, content: params.content });
      await mkdir(path.dirname(params.path), { recursive: true });
      await writeFile(params.path, params.content);
      return {};
    });
  ed.run = async (op, what, ms = 45_000) => {
    await relay.spawned;
    const { writable, readable } = check.streams(relay.child.stdin, relay.child.stdout);
    return withTimeout(ed.app.connectWith(acp.ndJsonStream(writable, readable), op), ms, what, () => relay.out.stderr);
  };
  ed.of = (sessionId, kind) => ed.updates.filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind)).map((u) => u.update);
  return ed;
}

export function assertSchema(t, ...eds) {
  for (const ed of eds) {
    t.diagnostic(`${ed.check.name}: checked ${ed.check.summary()}`);
    assert.deepEqual(ed.check.violations, [], `messages that break the ACP schema`);
    assert.ok(ed.check.checked.size > 0, 'something was checked');
  }
}
