// hearth's Responses simulator (`hearth sim`) held against OpenAI's Codex CLI
// (@openai/codex, the npm package and its bundled native binary, unmodified):
// `codex exec` runs one non-interactive task with the sim as its model
// provider, configured only through a config.toml in a temporary CODEX_HOME.
//
// Both transports: HTTP + SSE (`supports_websockets = false`) and the
// WebSocket mode (`supports_websockets = true`), where Codex warms up with
// generate:false and chains its turn on it. (Codex sends `"stream": true` in
// every WebSocket frame; the sim once refused that, which this test found.)

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { removeDir, startChild, startSim, stopChild, tempDir, withTimeout } from './helpers.mjs';

const require = createRequire(import.meta.url);
const CODEX_JS = path.join(path.dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');

const API_KEY = 'sk-codex-' + randomBytes(6).toString('hex');
const MODEL = 'interop-sim-model';
const PROMPT = `hello from codex exec, nonce ${randomBytes(4).toString('hex')}`;
const RUN_MS = 30_000;

let sim;
let baseURL;
let simDiag = () => '';
let dir; // holds CODEX_HOME, HOME and the workspace

before(async () => {
  ({ sim, baseURL, diag: simDiag } = await startSim(['--api-key', API_KEY, '-v']));
  dir = await tempDir('hearth-interop-codex-');
});

after(async () => {
  await stopChild(sim);
  await removeDir(dir);
});

/**
 * config.toml for a Codex that talks only to the sim: a custom provider with
 * no retries and short timeouts, no approvals, a read-only sandbox, and
 * nothing that reaches for the network or a login (update check, analytics,
 * feedback, plugins/apps, model discovery, a background daemon).
 */
function codexConfig({ websockets }) {
  return `model = "${MODEL}"
model_provider = "hearth-sim"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.hearth-sim]
name = "hearth sim"
base_url = "${baseURL}"
env_key = "HEARTH_SIM_KEY"
wire_api = "responses"
supports_websockets = ${websockets}
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 10000
websocket_connect_timeout_ms = 5000

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
tool_suggest = false
daemon_auto_start = false
unbounded_connection_retries = false
api_key_model_discovery = false
`;
}

/** Runs `codex exec PROMPT` to completion; resolves with its exit and output. */
async function codexExec({ websockets, name }) {
  const root = path.join(dir, name);
  const codexHome = path.join(root, 'codex-home');
  const workspace = path.join(root, 'workspace');
  await mkdir(codexHome, { recursive: true });
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(codexHome, 'config.toml'), codexConfig({ websockets }));
  await writeFile(path.join(workspace, 'README.md'), 'an empty workspace for codex exec\n');
  const lastMessage = path.join(root, 'last-message.txt');

  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(OPENAI_|CODEX_|HEARTH_|RUST_LOG)/.test(k)),
  );
  Object.assign(env, { HOME: root, CODEX_HOME: codexHome, HEARTH_SIM_KEY: API_KEY });

  const args = [
    CODEX_JS,
    'exec',
    '--strict-config', // a config key this Codex no longer knows fails the test, not silently
    '--skip-git-repo-check',
    '--ephemeral',
    '--color',
    'never',
    '--cd',
    workspace,
    '--output-last-message',
    lastMessage,
    PROMPT,
  ];
  const proc = startChild(process.execPath, args, { env });
  await proc.spawned;
  proc.child.stdin.end(); // no piped input: the prompt is the argument
  const diag = () => `codex stdout:\n${proc.out.stdout}\ncodex stderr:\n${proc.out.stderr}\n${simDiag()}`;
  let exit;
  try {
    exit = await withTimeout(proc.exited, RUN_MS, 'codex exec to finish', diag);
  } finally {
    await stopChild(proc).catch(() => {});
  }
  const last = await readFile(lastMessage, 'utf8').catch(() => null);
  return { exit, stdout: proc.out.stdout, stderr: proc.out.stderr, last, diag };
}

test('Codex CLI (codex exec) completes a task against hearth sim over HTTP + SSE', { timeout: RUN_MS + 10_000 }, async (t) => {
  const run = await codexExec({ websockets: false, name: 'sse' });
  t.diagnostic(`codex stdout: ${JSON.stringify(run.stdout)}`);

  assert.deepEqual(run.exit, { code: 0, signal: null }, `codex exec exit\n${run.diag()}`);
  const expected = `You said: ${PROMPT}`;
  assert.ok(run.stdout.includes(expected), `codex printed the sim's answer ${JSON.stringify(expected)}\n${run.diag()}`);
  assert.equal(run.last?.trim(), expected, `--output-last-message holds exactly the sim's answer\n${run.diag()}`);
  // Codex names the provider it used in its run header (stderr).
  assert.match(run.stderr, /provider: hearth-sim/, run.diag());
  assert.match(run.stderr, new RegExp(`model: ${MODEL}`), run.diag());
});

// The sim's -v lines: one per answered request.
function simRequests() {
  return sim.out.stdout
    .split('\n')
    .filter((l) => l.startsWith('request '))
    .map((l) => Object.fromEntries(l.slice('request '.length).split(' ').map((kv) => kv.split('='))));
}

test('Codex CLI (codex exec) completes a task against hearth sim over the WebSocket, warmed and chained', { timeout: RUN_MS + 10_000 }, async (t) => {
  const before = simRequests().length;
  const run = await codexExec({ websockets: true, name: 'ws' });
  t.diagnostic(`codex stdout: ${JSON.stringify(run.stdout)}`);
  assert.deepEqual(run.exit, { code: 0, signal: null }, `codex exec exit\n${run.diag()}`);
  const expected = `You said: ${PROMPT}`;
  assert.ok(run.stdout.includes(expected), `codex printed the sim's answer\n${run.diag()}`);

  // The sim prints a -v line right after answering; Codex may exit before
  // the line reaches us, so wait for the sim's output, not a timer.
  while (simRequests().length < before + 2) {
    await withTimeout(once(sim.child.stdout, 'data'), 10_000, "the sim's request lines", run.diag);
  }
  const reqs = simRequests().slice(before);
  assert.ok(reqs.length >= 2, `the sim served Codex's requests: ${JSON.stringify(reqs)}\n${run.diag()}`);
  assert.ok(reqs.every((r) => r.transport === 'ws'), `all over the WebSocket: ${JSON.stringify(reqs)}`);
  const [warm, turn] = reqs;
  assert.equal(warm.generate, 'false', 'Codex warms up first');
  assert.equal(turn.prev, warm.outcome, 'the turn chains on the warm-up');
  assert.equal(turn.conn, warm.conn, 'on the same connection');
});
