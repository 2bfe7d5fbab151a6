// The ACP client of hearth: spawns `hearth acp` (the stdio relay to the
// per-user daemon) and speaks ACP v1 to it through the official SDK's client
// app over the child's newline-delimited JSON stdio.
//
// This module imports nothing from `vscode`, so its tests run in plain node
// against the real binary.
import * as acp from "@agentclientprotocol/sdk";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as os from "node:os";
import { Readable, Writable } from "node:stream";

import { resolveHearthBinary } from "./binary.js";
import { HearthGoneError, HearthNotFoundError, HearthRpcError, describeError } from "./errors.js";
import type { HearthProcesses } from "./processes.js";
import type { HearthRules } from "./rules.js";
import type { HearthStatus } from "./status.js";
import type { CheckpointResult, SteerOutcome } from "../protocol.js";

export type { HearthStatus } from "./status.js";

/** `_hearth/rewind`'s answer: a listing (`turns`) or what a rewind did. */
export interface RewindResult extends CheckpointResult {
  rewound?: boolean;
  /** `paths`: the files counted in `files`, the first 50 of them. */
  turns?: { turn: number; prompt: string; files: number; rewound: boolean; paths?: string[] }[];
}

/** Answers one `session/request_permission`. `signal` aborts when the turn is cancelled or the daemon goes away. */
export type PermissionHandler = (
  request: acp.RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<acp.RequestPermissionOutcome>;

/**
 * Serves the agent's `fs/read_text_file` and `fs/write_text_file` from the
 * editor's documents. Given to the client, both capabilities are advertised.
 * Errors thrown become the call's JSON-RPC error (ENOENT: resource not found).
 */
export interface FileAccess {
  readTextFile(params: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(params: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
}

export interface HearthClientOptions {
  /** The `hearth.path` setting: a path or a command name looked up on PATH. */
  path?: string;
  /** Arguments to the binary; default ["acp"]. */
  args?: string[];
  /** The child's environment; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The child's working directory; default the home directory. */
  cwd?: string;
  clientInfo?: { name: string; version: string };
  /** MCP servers passed in session/new and session/load (the `hearth.mcpServers` setting); default none. */
  mcpServers?: acp.McpServer[];
  /** Bound on `initialize` (which may have to start the daemon); default 30 s. */
  initializeTimeoutMs?: number;
  onPermission?: PermissionHandler;
  /** The editor's documents, for the agent's reads and writes; without it the agent uses the disk. */
  files?: FileAccess;
}

export type ClientEvents = {
  /** Every `session/update`, in arrival order. */
  update: (n: acp.SessionNotification) => void;
  /** The relay is up and initialized. */
  connected: (init: acp.InitializeResponse) => void;
  /** The relay or the daemon went away; the next call reconnects. */
  disconnected: (err: HearthGoneError) => void;
  /** A line the relay wrote on stderr. */
  log: (line: string) => void;
};

type Listener<K extends keyof ClientEvents> = ClientEvents[K];

interface Live {
  child: ChildProcessWithoutNullStreams;
  conn: acp.ClientConnection;
  init?: acp.InitializeResponse;
  gone?: HearthGoneError;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  exited: Promise<void>;
  stderrTail: string[];
}

interface PendingPermission {
  sessionId: string;
  controller: AbortController;
}

const CANCELLED: acp.RequestPermissionOutcome = { outcome: "cancelled" };

function abortPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function isRequestError(e: unknown): e is { code: number; message: string; data?: unknown } {
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "number";
}

export class HearthClient {
  private live?: Live;
  private opening?: Promise<Live>;
  private disposed = false;
  private readonly listeners: { [K in keyof ClientEvents]: Set<Listener<K>> } = {
    update: new Set(),
    connected: new Set(),
    disconnected: new Set(),
    log: new Set(),
  };
  private readonly permissions = new Set<PendingPermission>();
  private readonly modes = new Map<string, acp.SessionModeState>();
  onPermission?: PermissionHandler;

  constructor(private readonly opts: HearthClientOptions = {}) {
    this.onPermission = opts.onPermission;
  }

  on<K extends keyof ClientEvents>(event: K, fn: Listener<K>): () => void {
    this.listeners[event].add(fn);
    return () => this.listeners[event].delete(fn);
  }

  private emit<K extends keyof ClientEvents>(event: K, ...args: Parameters<ClientEvents[K]>): void {
    for (const fn of [...this.listeners[event]]) {
      try {
        (fn as (...a: unknown[]) => void)(...args);
      } catch (e) {
        // A listener's bug must not break the stream of updates.
        if (event !== "log") this.emit("log", `listener for ${event} threw: ${describeError(e)}`);
      }
    }
  }

  /** Whether a relay is up and initialized right now. */
  get connected(): boolean {
    return !!this.live && !this.live.gone && !!this.live.init;
  }

  /** The `initialize` answer of the current connection. */
  get agentInfo(): acp.InitializeResponse | undefined {
    return this.connected ? this.live?.init : undefined;
  }

  /** The process id of the relay (not the daemon). */
  get relayPid(): number | undefined {
    return this.live?.child.pid;
  }

  /** Connects (starting the daemon when needed) unless already connected. */
  async connect(): Promise<acp.InitializeResponse> {
    const live = await this.ensure();
    return live.init!;
  }

  private ensure(): Promise<Live> {
    if (this.disposed) return Promise.reject(new Error("the hearth client was disposed"));
    if (this.live && !this.live.gone && this.live.init) return Promise.resolve(this.live);
    if (!this.opening) {
      this.opening = this.open().finally(() => {
        this.opening = undefined;
      });
    }
    return this.opening;
  }

  private async open(): Promise<Live> {
    const command = resolveHearthBinary(this.opts.path, this.opts.env ?? process.env, this.opts.cwd ?? process.cwd());
    const child = spawn(command, this.opts.args ?? ["acp"], {
      env: this.opts.env ?? process.env,
      cwd: this.opts.cwd ?? os.homedir(),
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EACCES") throw new HearthNotFoundError(this.opts.path ?? "hearth", `${command}: ${code}`);
      throw new HearthGoneError(`could not start ${command}: ${describeError(e)}`);
    }
    // Writes after the relay died fail with EPIPE: the close path reports it.
    child.stdin.on("error", () => {});
    child.on("error", (e) => this.emit("log", `hearth acp: ${describeError(e)}`));

    const stderrTail: string[] = [];
    let partial = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.trim()) continue;
        stderrTail.push(line);
        if (stderrTail.length > 10) stderrTail.shift();
        this.emit("log", line);
      }
    });

    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    );
    const app = acp
      .client({ name: this.opts.clientInfo?.name ?? "hearth-vscode" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.trackModes(params);
        this.emit("update", params);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) =>
        this.askPermission(params, signal),
      )
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => this.serveFile((f) => f.readTextFile(params)))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => this.serveFile((f) => f.writeTextFile(params)));
    const conn = app.connect(stream);

    let live!: Live;
    // "close" (not "exit"): stderr has been read to the end by then.
    const exited = new Promise<void>((resolve) => {
      child.once("close", (code, signal) => {
        live.exit = { code, signal };
        resolve();
        this.markGone(live);
      });
    });
    live = { child, conn, exited, stderrTail };
    this.live = live;
    void conn.closed.then(() => this.settleGone(live));

    const timeout = this.opts.initializeTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const init = await Promise.race([
        this.request<acp.InitializeResponse>(live, acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: !!this.opts.files, writeTextFile: !!this.opts.files }, terminal: false },
          clientInfo: this.opts.clientInfo ?? { name: "hearth-vscode", version: "0.1.0" },
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new HearthGoneError(`hearth acp did not answer initialize within ${timeout / 1000} s`)),
            timeout,
          );
        }),
      ]);
      live.init = init;
    } catch (e) {
      this.kill(live);
      throw e;
    } finally {
      clearTimeout(timer);
    }
    this.emit("connected", live.init);
    return live;
  }

  /**
   * Waits (briefly) for the relay to exit so the error can say how, then
   * records that `live` is finished.
   */
  private async settleGone(live: Live): Promise<HearthGoneError> {
    if (!live.gone && !live.exit) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        live.exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 2000);
        }),
      ]);
      clearTimeout(timer);
    }
    return this.markGone(live);
  }

  /** Records that `live` is finished; idempotent. */
  private markGone(live: Live): HearthGoneError {
    if (live.gone) return live.gone;
    let detail = "the connection to hearth acp closed";
    if (live.exit) {
      detail = live.exit.signal
        ? `hearth acp was killed by ${live.exit.signal}`
        : `hearth acp exited with code ${live.exit.code}`;
    }
    if (live.stderrTail.length) detail += ` (${live.stderrTail.slice(-3).join(" | ")})`;
    const err = new HearthGoneError(detail);
    live.gone = err;
    live.conn.close(err);
    this.kill(live);
    for (const p of this.permissions) p.controller.abort(err);
    const wasLive = !!live.init;
    if (this.live === live) this.live = undefined;
    if (wasLive && !this.disposed) this.emit("disconnected", err);
    return err;
  }

  private kill(live: Live): void {
    if (live.exit === undefined && live.child.exitCode === null && live.child.signalCode === null) {
      live.child.kill("SIGTERM");
    }
  }

  private async request<T>(live: Live, method: string, params: unknown): Promise<T> {
    try {
      return (await live.conn.agent.request(method, params)) as T;
    } catch (e) {
      if (live.gone || live.conn.signal.aborted) throw await this.settleGone(live);
      if (e instanceof HearthGoneError) throw e;
      if (isRequestError(e)) throw new HearthRpcError(method, e.code, e.message, e.data);
      throw e;
    }
  }

  /** Sends `method` on the current connection, connecting first when needed. */
  async call<T = unknown>(method: string, params: unknown = {}): Promise<T> {
    const live = await this.ensure();
    return this.request<T>(live, method, params);
  }

  private requireCapability(ok: boolean | undefined, what: string): void {
    if (!ok) throw new HearthRpcError(what, -32601, "the agent does not advertise it");
  }

  async newSession(cwd: string): Promise<acp.NewSessionResponse> {
    const res = await this.call<acp.NewSessionResponse>(acp.methods.agent.session.new, {
      cwd,
      mcpServers: this.opts.mcpServers ?? [],
    });
    if (res.modes) this.modes.set(res.sessionId, res.modes);
    return res;
  }

  /**
   * Runs one turn. Resolves after every `session/update` the daemon sent
   * before its answer has been delivered to the `update` listeners.
   */
  async prompt(sessionId: string, prompt: string | acp.ContentBlock[]): Promise<acp.PromptResponse> {
    const blocks: acp.ContentBlock[] = typeof prompt === "string" ? [{ type: "text", text: prompt }] : prompt;
    const res = await this.call<acp.PromptResponse>(acp.methods.agent.session.prompt, { sessionId, prompt: blocks });
    // The SDK dispatches notifications through a few microtasks; let the
    // ones that arrived before this answer reach the listeners first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return res;
  }

  /**
   * Cancels the running turn of `sessionId`: answers its pending permission
   * requests as cancelled (as ACP requires) and sends `session/cancel`.
   * Does nothing when no relay is up (there is no turn to cancel then).
   */
  async cancel(sessionId: string): Promise<void> {
    for (const p of this.permissions) {
      if (p.sessionId === sessionId) p.controller.abort(new Error("cancelled"));
    }
    const live = this.live;
    if (!live || live.gone || !live.init) return;
    try {
      await live.conn.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    } catch (e) {
      if (live.gone || live.conn.signal.aborted) throw this.markGone(live);
      throw e;
    }
  }

  async listSessions(cwd?: string): Promise<acp.SessionInfo[]> {
    const live = await this.ensure();
    this.requireCapability(!!live.init?.agentCapabilities?.sessionCapabilities?.list, acp.methods.agent.session.list);
    const out: acp.SessionInfo[] = [];
    let cursor: string | null | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await this.request<acp.ListSessionsResponse>(live, acp.methods.agent.session.list, {
        ...(cwd ? { cwd } : {}),
        ...(cursor ? { cursor } : {}),
      });
      out.push(...res.sessions);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  /** Loads a stored session: its history arrives as `update` events before this resolves. */
  async loadSession(sessionId: string, cwd: string): Promise<acp.LoadSessionResponse> {
    const live = await this.ensure();
    this.requireCapability(live.init?.agentCapabilities?.loadSession, acp.methods.agent.session.load);
    const res = await this.request<acp.LoadSessionResponse>(live, acp.methods.agent.session.load, {
      sessionId,
      cwd,
      mcpServers: this.opts.mcpServers ?? [],
    });
    if (res?.modes) this.modes.set(sessionId, res.modes);
    await new Promise<void>((resolve) => setImmediate(resolve));
    return res ?? {};
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    await this.call(acp.methods.agent.session.setMode, { sessionId, modeId });
    const m = this.modes.get(sessionId);
    if (m) this.modes.set(sessionId, { ...m, currentModeId: modeId });
  }

  /** Sets one of the session's config options (the model, its effort, the mode); answers with all of them. */
  setConfigOption(sessionId: string, configId: string, value: string): Promise<acp.SetSessionConfigOptionResponse> {
    return this.call<acp.SetSessionConfigOptionResponse>(acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
  }

  /** The modes the agent reported for `sessionId` (session/new, session/load, current_mode_update). */
  sessionModes(sessionId: string): acp.SessionModeState | undefined {
    return this.modes.get(sessionId);
  }

  status(): Promise<HearthStatus> {
    return this.call<HearthStatus>("_hearth/status", {});
  }

  /** `_hearth/status` on the current connection only: undefined when none is up (never starts a daemon). */
  async statusIfConnected(): Promise<HearthStatus | undefined> {
    const live = this.live;
    if (!live || live.gone || !live.init) return undefined;
    return this.request<HearthStatus>(live, "_hearth/status", {});
  }

  inspect(sessionId: string): Promise<unknown> {
    return this.call("_hearth/inspect", { sessionId });
  }

  /** `_hearth/rules`: every workspace's kept "always allow" rules. */
  rules(): Promise<HearthRules> {
    return this.call<HearthRules>("_hearth/rules", {});
  }

  /** `_hearth/rules/revoke`: removes the rule `id`; the next such call asks again. */
  revokeRule(id: number): Promise<{ revoked: number }> {
    return this.call<{ revoked: number }>("_hearth/rules/revoke", { id });
  }

  /** `_hearth/processes`: the processes the session's exec_command calls left running, oldest first. */
  processes(sessionId: string): Promise<HearthProcesses> {
    return this.call<HearthProcesses>("_hearth/processes", { sessionId });
  }

  /** `_hearth/process/kill`: ends the process and everything it started; answers once they have ended. */
  killProcess(sessionId: string, processId: number): Promise<{ killed: boolean }> {
    return this.call<{ killed: boolean }>("_hearth/process/kill", { sessionId, processId });
  }

  /** Whether initialize advertised `_session/steering` (`_meta.steering.supported`). */
  get steeringSupported(): boolean {
    const steering = (this.live?.init?._meta as { steering?: { supported?: unknown } } | undefined)?.steering;
    return steering?.supported === true;
  }

  /** Whether initialize advertised `session/fork` (`agentCapabilities.sessionCapabilities.fork`). */
  get forkSupported(): boolean {
    const caps = this.live?.init?.agentCapabilities?.sessionCapabilities as { fork?: unknown } | undefined;
    return caps?.fork !== undefined && caps?.fork !== null;
  }

  /**
   * `_session/steering`: more input for the session's running turn. With
   * `requireTurn`, a session with no turn running refuses it ("failed")
   * instead of starting one.
   */
  async steer(sessionId: string, prompt: acp.ContentBlock[], requireTurn = false): Promise<SteerOutcome> {
    const res = await this.call<{ outcome?: string }>("_session/steering", {
      sessionId,
      prompt,
      ...(requireTurn ? { _meta: { steering: { idleBehavior: "promptRequired" } } } : {}),
    });
    return res.outcome === "injected" || res.outcome === "startedNewTurn" ? res.outcome : "failed";
  }

  /** `_hearth/undo`: puts back the files of the session's last turn that changed any. */
  undo(sessionId: string): Promise<CheckpointResult & { undone?: boolean }> {
    return this.call("_hearth/undo", { sessionId });
  }

  /** `_hearth/undo` as a dry run: what an undo would put back, changing nothing. */
  undoPreview(sessionId: string): Promise<CheckpointResult & { undone?: boolean }> {
    return this.call("_hearth/undo", { sessionId, dryRun: true });
  }

  /** `_hearth/rewind`: with `turn`, files and conversation back to before that prompt; without, the prompts to choose from. */
  rewind(sessionId: string, turn?: number): Promise<RewindResult> {
    return this.call<RewindResult>("_hearth/rewind", turn ? { sessionId, turn } : { sessionId });
  }

  /** Whether `session/fork` takes `_meta["hearth/turn"]` (a fork from before that prompt): `fork._meta["hearth/fromTurn"]`. */
  get forkFromTurnSupported(): boolean {
    const caps = this.live?.init?.agentCapabilities?.sessionCapabilities as { fork?: { _meta?: Record<string, unknown> | null } | null } | undefined;
    return caps?.fork?._meta?.["hearth/fromTurn"] === true;
  }

  /** `session/fork` (unstable ACP): a new session with the history of `sessionId`; with `turn`, as it was before that prompt. */
  async fork(sessionId: string, cwd: string, turn?: number): Promise<acp.NewSessionResponse> {
    const live = await this.ensure();
    this.requireCapability(this.forkSupported, "session/fork");
    if (turn) this.requireCapability(this.forkFromTurnSupported, "session/fork from a turn");
    const res = await this.request<acp.NewSessionResponse>(live, "session/fork", {
      sessionId,
      cwd,
      mcpServers: this.opts.mcpServers ?? [],
      ...(turn ? { _meta: { "hearth/turn": turn } } : {}),
    });
    if (res.modes) this.modes.set(res.sessionId, res.modes);
    return res;
  }

  private trackModes(n: acp.SessionNotification): void {
    const u = n.update;
    if (u.sessionUpdate === "current_mode_update") {
      const m = this.modes.get(n.sessionId);
      this.modes.set(n.sessionId, { availableModes: m?.availableModes ?? [], currentModeId: u.currentModeId });
    }
  }

  private async askPermission(
    params: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<acp.RequestPermissionResponse> {
    const handler = this.onPermission;
    if (!handler) return { outcome: CANCELLED };
    const entry: PendingPermission = { sessionId: params.sessionId, controller: new AbortController() };
    const onAbort = () => entry.controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    this.permissions.add(entry);
    try {
      const outcome = await Promise.race([
        handler(params, entry.controller.signal),
        abortPromise(entry.controller.signal).then(() => CANCELLED),
      ]);
      if (outcome.outcome === "selected" && !params.options.some((o) => o.optionId === outcome.optionId)) {
        return { outcome: CANCELLED };
      }
      return { outcome: entry.controller.signal.aborted ? CANCELLED : outcome };
    } catch (e) {
      this.emit("log", `permission handler failed: ${describeError(e)}`);
      return { outcome: CANCELLED };
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.permissions.delete(entry);
      if (!entry.controller.signal.aborted) entry.controller.abort(new Error("answered"));
    }
  }

  /** Runs one fs request on the editor's documents; a failure is the request's JSON-RPC error. */
  private async serveFile<T>(op: (files: FileAccess) => Promise<T>): Promise<T> {
    const files = this.opts.files;
    if (!files) throw new acp.RequestError(-32601, "method not found: this client does not serve files");
    try {
      return await op(files);
    } catch (e) {
      if (e instanceof acp.RequestError) throw e;
      const code = (e as NodeJS.ErrnoException).code === "ENOENT" ? -32002 : -32603;
      throw new acp.RequestError(code, describeError(e));
    }
  }

  /** Stops the relay (the daemon keeps running for other editors). */
  dispose(): void {
    this.disposed = true;
    const live = this.live;
    if (live) {
      this.markGone(live);
    }
  }
}
