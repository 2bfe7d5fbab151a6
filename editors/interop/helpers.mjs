// Shared plumbing for the interop tests: locating the hearth binary, child
// processes, timeouts, free ports, and stopping an auto-started daemon.
// Nothing here knows hearth's internals: it talks to hearth only through its
// command line, its environment variables and its ACP socket.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The hearth binary under test: $HEARTH_BIN (test.sh builds it). */
export function hearthBin() {
  const bin = process.env.HEARTH_BIN;
  if (!bin) {
    throw new Error('HEARTH_BIN is not set: run the suite through test.sh, which builds hearth');
  }
  if (!existsSync(bin)) {
    throw new Error(`HEARTH_BIN=${bin} does not exist`);
  }
  return bin;
}

/**
 * Resolves with p's value, or rejects after ms with an error naming what was
 * awaited (and whatever `detail()` adds, e.g. a child's stderr).
 */
export function withTimeout(p, ms, what, detail = () => '') {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const extra = detail();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}${extra ? `\n${extra}` : ''}`));
    }, ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** A temp directory with a short path (unix socket paths are limited to 108 bytes). */
export async function shortTempDir(prefix) {
  return realpath(await mkdtemp(path.join('/tmp', prefix)));
}

/** A temp directory in the OS temp dir, real path (symlinks resolved). */
export async function tempDir(prefix) {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

export async function removeDir(dir) {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort() {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/**
 * Spawns a child with piped stdio and keeps its stderr (and, unless the
 * caller reads stdout itself, its stdout) for diagnostics. `exited` resolves
 * with {code, signal} when it ends.
 */
export function startChild(bin, args, { env, keepStdout = true } = {}) {
  const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => (out.stderr += d));
  if (keepStdout) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => (out.stdout += d));
  }
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawned = new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return { child, out, exited, spawned };
}

/** Ends a child we started (SIGTERM) and waits for it to exit. */
export async function stopChild(proc, ms = 5000) {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  await withTimeout(proc.exited, ms, `${proc.child.spawnfile} to exit after SIGTERM`);
}

/**
 * Resolves when a TCP server accepts connections on 127.0.0.1:port. Each
 * attempt waits for the connect or error event; a refused attempt is retried
 * at once, so readiness is noticed as soon as the listener exists. Fails at
 * once if `exited` resolves first (the server died), or after ms.
 */
export async function waitForListener(port, exited, ms, detail = () => '') {
  let dead = null;
  exited.then((st) => (dead = st));
  const deadline = Date.now() + ms;
  for (;;) {
    if (dead) throw new Error(`server exited (${JSON.stringify(dead)}) before listening on ${port}\n${detail()}`);
    if (Date.now() > deadline) throw new Error(`nothing listened on 127.0.0.1:${port} within ${ms} ms\n${detail()}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A minimal newline-delimited JSON-RPC client on hearth's unix socket, used
 * only for teardown (the ACP client under test is the SDK).
 */
export async function rpcSocket(socketPath, ms = 5000) {
  const sock = net.connect(socketPath);
  await withTimeout(
    new Promise((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    }),
    ms,
    `connect to ${socketPath}`,
  );
  const pending = new Map();
  let buf = '';
  let nextId = 1;
  sock.setEncoding('utf8');
  sock.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (!line) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        continue; // not ours to judge here: teardown only needs the replies
      }
      const p = msg.id !== undefined ? pending.get(msg.id) : undefined;
      if (!p) continue; // notifications are of no interest here
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${JSON.stringify(msg.error)}`));
      else p.resolve(msg.result);
    }
  });
  const closed = new Promise((resolve) => sock.once('close', resolve));
  sock.on('error', () => {}); // 'close' follows; pending calls time out
  return {
    closed,
    call(method, params) {
      const id = nextId++;
      const p = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
      sock.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return withTimeout(p, ms, `${method} on ${socketPath}`);
    },
    end() {
      sock.destroy();
    },
  };
}

/** Whether pid is a live process (a zombie left unreaped by init counts as gone). */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Stops the daemon that `hearth acp` started detached on socketPath: asks it
 * for its pid through _hearth/status, sends SIGTERM, waits for it to hang up
 * the connection (an event), then confirms the process is gone. The daemon is
 * not our child, so there is no exit event to wait on: that last check
 * polls /proc, bounded by ms. Returns the pid, or null when no daemon
 * answered on the socket.
 */
export async function stopDaemon(socketPath, ms = 10000) {
  if (!existsSync(socketPath)) return null;
  let rpc;
  try {
    rpc = await rpcSocket(socketPath);
  } catch {
    return null; // a stale socket file: nothing answers
  }
  try {
    await rpc.call('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const status = await rpc.call('_hearth/status', {});
    const pid = status?.pid;
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`_hearth/status gave no pid: ${JSON.stringify(status)}`);
    process.kill(pid, 'SIGTERM');
    await withTimeout(rpc.closed, ms, `daemon ${pid} to hang up after SIGTERM`);
    const deadline = Date.now() + ms;
    while (alive(pid)) {
      if (Date.now() > deadline) throw new Error(`daemon ${pid} still running ${ms} ms after SIGTERM`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return pid;
  } finally {
    rpc.end();
  }
}

/** The auto-started daemon's log, for failure messages. */
export function daemonLog(dataDir) {
  try {
    return readFileSync(path.join(dataDir, 'hearth.log'), 'utf8');
  } catch {
    return '(no daemon log)';
  }
}

/**
 * Resolves with the first match of re in the child's stdout (startChild with
 * keepStdout), checking on every chunk as it arrives. Fails at once if the
 * child exits first, or after ms.
 */
export function waitForStdout(proc, re, ms, what, detail = () => '') {
  let onData;
  const found = new Promise((resolve, reject) => {
    const check = () => {
      const m = proc.out.stdout.match(re);
      if (m) resolve(m);
      return m;
    };
    onData = check;
    proc.child.stdout.on('data', onData);
    proc.exited.then((st) => {
      if (!check()) reject(new Error(`${proc.child.spawnfile} exited (${JSON.stringify(st)}) before printing ${what}\n${detail()}`));
    });
    check();
  });
  return withTimeout(found, ms, what, detail).finally(() => proc.child.stdout.off('data', onData));
}

/**
 * Starts `hearth sim` on a free port (--addr 127.0.0.1:0) with extra args
 * and resolves once it listens, with the base URL it prints
 * (http://127.0.0.1:PORT/v1; the sim prints it only after listening).
 */
export async function startSim(args = [], ms = 10_000) {
  const sim = startChild(hearthBin(), ['sim', '--addr', '127.0.0.1:0', ...args]);
  await sim.spawned;
  const diag = () => `hearth sim stdout:\n${sim.out.stdout}\nstderr:\n${sim.out.stderr}`;
  try {
    const [baseURL] = await waitForStdout(sim, /http:\/\/127\.0\.0\.1:\d+\/v1/, ms, 'the simulator base URL', diag);
    return { sim, baseURL, diag };
  } catch (err) {
    await stopChild(sim).catch(() => {});
    throw err;
  }
}
