// Test helpers: the hearth binary, a simulator, isolated daemon environments,
// and awaiting events with a bound.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import type { HostMessage } from "../src/protocol.js";

export const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const REPO_DIR = path.resolve(PACKAGE_DIR, "..", "..");

/** Rejects with a message naming `what` when `p` does not settle within `ms`. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The hearth binary: $HEARTH_BIN (test.sh builds it), else built once into a temp dir. */
export function hearthBinary(): string {
  const fromEnv = process.env.HEARTH_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`HEARTH_BIN=${fromEnv} does not exist`);
    return fromEnv;
  }
  const out = path.join(os.tmpdir(), `hearth-vscode-test-${process.getuid?.() ?? 0}`, "hearth");
  mkdirSync(path.dirname(out), { recursive: true });
  execFileSync("go", ["build", "-o", out, "./cmd/hearth"], { cwd: REPO_DIR, stdio: "inherit" });
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function connectOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

export interface Sim {
  baseUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Runs `hearth sim` on a free loopback port. */
export async function startSim(bin: string): Promise<Sim> {
  const port = await freePort();
  const child = spawn(bin, ["sim", "--addr", `127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // `hearth sim` prints its banner just before it listens.
  await within(
    new Promise<void>((resolve, reject) => {
      child.stdout!.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`hearth sim exited (${code}): ${stderr}`)));
    }),
    20_000,
    "hearth sim to start",
  );
  // The banner comes right before listen(2): retry the connection until it is accepted.
  const deadline = Date.now() + 10_000;
  while (!(await connectOnce(port))) {
    if (Date.now() > deadline) throw new Error(`hearth sim is not listening on ${port}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await within(exited, 10_000, "hearth sim to exit");
    },
  };
}

/** A prompt that makes `hearth sim` call `tool` once with `args`, then answer. */
export function simCall(tool: string, args: Record<string, unknown>): string {
  // The directive's JSON must hold no spaces: JSON.stringify puts none between
  // tokens, and the ones inside strings become \u0020.
  return `sim:calls=1 sim:tool=${tool} sim:args=${JSON.stringify(args).replaceAll(" ", "\\u0020")}`;
}

export interface Env {
  dir: string;
  socket: string;
  dataDir: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/**
 * An isolated daemon environment: its own short socket path under /tmp, data
 * directory and a small workspace, talking to `sim`.
 */
export function isolatedEnv(sim: Sim): Env {
  const dir = mkdtempSync("/tmp/hv-");
  const socket = path.join(dir, "s.sock");
  const dataDir = path.join(dir, "data");
  const workspace = path.join(dir, "ws");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "a.txt"), "hello from a.txt\n");
  writeFileSync(path.join(workspace, "src", "main.go"), "package main\n\nfunc main() {}\n");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HEARTH_SOCKET: socket,
    HEARTH_DATA_DIR: dataDir,
    OPENAI_BASE_URL: sim.baseUrl,
    OPENAI_API_KEY: "sk-test-not-a-real-key",
  };
  delete env.XDG_RUNTIME_DIR;
  return {
    dir,
    socket,
    dataDir,
    workspace,
    env,
    cleanup() {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** Stops a daemon we started (by its pid from `_hearth/status`). */
export function killPid(pid: number | undefined, signal: NodeJS.Signals = "SIGTERM"): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
}

/**
 * Stops the daemon serving `env`'s socket, if one runs: asks `hearth status
 * --json` (which never starts one) for its pid. For teardown after a test
 * that failed before it learned the pid.
 */
export async function stopDaemonOf(bin: string, env: Env): Promise<void> {
  if (!existsSync(env.socket)) return;
  const out = await new Promise<string>((resolve) => {
    execFile(bin, ["status", "--json"], { env: env.env, timeout: 10_000 }, (_err, stdout) => resolve(String(stdout)));
  });
  try {
    const pid = (JSON.parse(out) as { pid?: number }).pid;
    killPid(pid);
  } catch {
    // not running, or not JSON: nothing to stop
  }
}

/**
 * The text of each run of consecutive thought chunks among `msgs`: what each
 * thought block shows. Any other update or a prompt ends a run.
 */
export function thoughtRuns(msgs: HostMessage[]): string[] {
  const runs: string[] = [];
  let inRun = false;
  for (const m of msgs) {
    const thought = m.type === "update" && m.update.sessionUpdate === "agent_thought_chunk";
    if (thought) {
      const text = (m.update.content as { text?: string }).text ?? "";
      if (inRun) runs[runs.length - 1] += text;
      else runs.push(text);
    }
    if (thought || m.type === "update" || m.type === "userPrompt") inRun = thought;
  }
  return runs;
}

/**
 * A program serving hearth's test MCP server (mcp/mcptest) on stdio when run
 * with MCP_TEST_SERVER_ARGS: $HEARTH_MCP_SERVER (test.sh builds it), else the
 * mcp package's test binary built once into a temp dir.
 */
export function mcpTestServer(): string {
  const fromEnv = process.env.HEARTH_MCP_SERVER;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`HEARTH_MCP_SERVER=${fromEnv} does not exist`);
    return fromEnv;
  }
  const out = path.join(os.tmpdir(), `hearth-vscode-test-${process.getuid?.() ?? 0}`, "mcp-server");
  mkdirSync(path.dirname(out), { recursive: true });
  execFileSync("go", ["test", "-c", "-o", out, "./mcp"], { cwd: REPO_DIR, stdio: "inherit" });
  return out;
}

export const MCP_TEST_SERVER_ARGS = ["__mcp-test-server"];
