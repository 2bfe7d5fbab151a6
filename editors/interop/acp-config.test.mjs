// Acceptance tests of the model and effort pickers, context left and live
// command output, with clients the project did not write: the official
// @agentclientprotocol/sdk (config options in the answers,
// session/set_config_option, config_option_update and current_mode_update
// at two editors, usage_update, a command's output while it runs), and
// acpx (`--model`, `--config-option`), which drives `hearth acp` itself.
// hearth talks to its own simulator. Every message hearth sends is checked
// against the official ACP schema (schema-check.mjs).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import * as acp from '@agentclientprotocol/sdk';

import { assertSchema, editor, hearthEnv } from './acp-editor.mjs';
import { daemonLog, hearthBin, removeDir, rpcSocket, startChild, startSim, stopChild, stopDaemon, tempDir, withTimeout } from './helpers.mjs';
import { SchemaCheck } from './schema-check.mjs';

const KEY = 'sk-interop-config-' + randomBytes(6).toString('hex');
const WINDOW = 100_000;

let sim;
let simURL;
let simDiag;

before(async () => {
  ({ sim, baseURL: simURL, diag: simDiag } = await startSim(['--api-key', KEY]));
});

after(async () => {
  await stopChild(sim);
});

/** The option id of opts, or undefined. */
const option = (opts, id) => opts?.find((o) => o.id === id);
/** "mode/model/effort" as opts say ("-" for an absent option). */
const current = (opts) => ['mode', 'model', 'thought_level'].map((id) => option(opts, id)?.currentValue ?? '-').join('/');

/** The session's detail as hearth's inspect sees it (its model, its requests). */
async function inspect(socket, sessionId) {
  const rpc = await rpcSocket(socket);
  try {
    await rpc.call('initialize', { protocolVersion: 1, clientCapabilities: {} });
    return (await rpc.call('_hearth/inspect', { sessionId })).session;
  } finally {
    rpc.end();
  }
}

test('the official ACP SDK picks a model and an effort, sees both editors told, context left after each response, and a command\'s output while it runs — every message valid', { timeout: 120_000 }, async (t) => {
  const { home, env, socket, dataDir } = await hearthEnv(simURL, { OPENAI_API_KEY: KEY, HEARTH_CONTEXT_WINDOW: String(WINDOW) });
  const ws = await tempDir('hearth-interop-config-');
  await writeFile(path.join(ws, 'a.txt'), 'alpha\n');
  execFileSync('mkfifo', [path.join(ws, 'go-on')]);
  const a = editor('editor-a', env);
  const b = editor('editor-b', env);
  const diag = () => `daemon log:\n${daemonLog(dataDir)}\n${simDiag()}`;
  try {
    let sessionId;
    await a.run(async (ctxA) => {
      await ctxA.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const created = await ctxA.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      sessionId = created.sessionId;
      assert.equal(current(created.configOptions), 'ask/gpt-5.3-codex/medium');
      assert.deepEqual(created.configOptions.map((o) => o.category), ['mode', 'model', 'thought_level']);
      assert.ok(option(created.configOptions, 'model').options.some((o) => o.value === 'gpt-4o'));

      await b.run(async (ctxB) => {
        await ctxB.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const resumed = await ctxB.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, mcpServers: [] });
        assert.equal(current(resumed.configOptions), 'ask/gpt-5.3-codex/medium');

        // A model, then an effort it takes: both editors hear the whole set.
        const set = await ctxA.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'o3' });
        assert.equal(current(set.configOptions), 'ask/o3/medium');
        assert.deepEqual(option(set.configOptions, 'thought_level').options.map((o) => o.value), ['low', 'medium', 'high']);
        await ctxB.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'thought_level', value: 'high' });
        for (const ed of [a, b]) {
          await ed.waitFor(() => current(ed.of(sessionId, 'config_option_update').at(-1)?.configOptions) === 'ask/o3/high', `${ed.check.name}: config_option_update`);
        }
        await assert.rejects(ctxA.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'thought_level', value: 'xhigh' }), (err) => {
          assert.equal(err.code, -32602);
          assert.match(err.message, /value: thought_level cannot be "xhigh"; one of low, medium, high/);
          return true;
        });

        // Context left after each response, at both editors (a model
        // change told it too, once the warm-up had measured it).
        const [seenA, seenB] = [a.of(sessionId, 'usage_update').length, b.of(sessionId, 'usage_update').length];
        const r = await ctxA.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
        assert.equal(r.stopReason, 'end_turn', diag());
        const usage = a.of(sessionId, 'usage_update').slice(seenA);
        assert.equal(usage.length, 2, JSON.stringify(usage)); // the read's response, then the answer's
        assert.ok(usage.every((u) => u.size === WINDOW && u.used > 0), JSON.stringify(usage));
        assert.ok(usage[1].used > usage[0].used, JSON.stringify(usage));
        await b.waitFor(() => b.of(sessionId, 'usage_update').length === seenB + 2, 'editor-b: usage_update');
        assert.equal((await inspect(socket, sessionId)).model, 'o3');

        // The mode through its config option: current_mode_update too.
        await ctxB.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'mode', value: 'full-auto' });
        await a.waitFor(() => a.of(sessionId, 'current_mode_update').at(-1)?.currentModeId === 'full-auto', 'editor-a: current_mode_update');

        // A command's output while it runs: it waits on a FIFO until the test writes it.
        const seen = a.of(sessionId, 'tool_call_update').length;
        const done = ctxA.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text: 'run sim:calls=1 sim:tool=shell sim:args={"command":"echo\\u0020first;read\\u0020x\\u003cgo-on;echo\\u0020second"}' }],
        });
        const text = (ed) => ed.of(sessionId, 'tool_call_update').flatMap((u) => u.content ?? []).map((c) => c.content?.text ?? '').join('');
        for (const ed of [a, b]) await ed.waitFor(() => text(ed).includes('first\n'), `${ed.check.name}: the command's output while it runs`);
        assert.ok(!a.of(sessionId, 'tool_call_update').slice(seen).some((u) => u.status === 'completed'), 'completed before the command went on');
        await writeFile(path.join(ws, 'go-on'), '\n');
        assert.equal((await done).stopReason, 'end_turn', diag());
        const updates = a.of(sessionId, 'tool_call_update');
        const last = updates.at(-1);
        assert.equal(last.status, 'completed');
        assert.match(last.content[0].content.text, /first\nsecond\n/);
      }, 'editor B');
    }, 'editor A');
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

test('acpx --model and --config-option pick hearth\'s model and effort through session/set_config_option', { timeout: 90_000 }, async (t) => {
  const { home, env, socket, dataDir } = await hearthEnv(simURL, { OPENAI_API_KEY: KEY });
  const ws = await tempDir('hearth-interop-acpx-');
  // acpx starts its agent itself: a wrapper keeps what each side wrote, for the schema check.
  const sent = path.join(home, 'sent.ndjson');
  const received = path.join(home, 'received.ndjson');
  const agent = `sh -c 'tee ${sent} | ${hearthBin()} acp | tee ${received}'`;
  const cli = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/acpx/dist/cli.js');
  const run = startChild(process.execPath, [cli, '--agent', agent, '--cwd', ws, '--model', 'gpt-5.2', '--approve-all', '--format', 'json',
    'exec', '--config-option', 'thought_level=xhigh', 'hello from acpx'], { env });
  try {
    const st = await withTimeout(run.exited, 60_000, 'acpx exec', () => `${run.out.stderr}\n${daemonLog(dataDir)}`);
    assert.equal(st.code, 0, `acpx exec:\n${run.out.stdout}\n${run.out.stderr}\n${daemonLog(dataDir)}`);
    const lines = (await readFile(received, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    // The answer, however its text was cut into chunks (as much as arrived together goes in one).
    const answer = lines.filter((m) => m.params?.update?.sessionUpdate === 'agent_message_chunk')
      .map((m) => m.params.update.content.text).join('');
    assert.match(answer, /You said: hello from acpx/);
    const sessionId = lines.find((m) => m.result?.sessionId)?.result.sessionId;
    const answers = lines.filter((m) => m.result?.configOptions && !m.result.sessionId);
    assert.equal(answers.length, 2, 'two set_config_option answers: the model, then the effort');
    assert.equal(current(answers.at(-1).result.configOptions), 'ask/gpt-5.2/xhigh');
    assert.equal((await inspect(socket, sessionId)).model, 'gpt-5.2');

    const check = new SchemaCheck('acpx');
    check.transcript(await readFile(sent, 'utf8'), await readFile(received, 'utf8'));
    assertSchema(t, { check });
    assert.ok(check.checked.get('SetSessionConfigOptionResponse') === 2, check.summary());
  } finally {
    const errors = [];
    await stopChild(run).catch((err) => errors.push(err));
    await stopDaemon(socket).catch((err) => errors.push(err));
    await removeDir(ws);
    await removeDir(home);
    if (errors.length) throw errors[0];
  }
});
