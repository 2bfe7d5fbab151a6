// The extension's state and actions: one hearth connection, the current
// session, the chat view's transcript, permission prompts.
import type * as acp from "@agentclientprotocol/sdk";
import * as path from "node:path";
import * as vscode from "vscode";

import { HearthClient } from "./acp/client.js";
import { HearthGoneError, HearthNotFoundError, README_URL, describeError } from "./acp/errors.js";
import type { HearthProcesses } from "./acp/processes.js";
import type { HearthRules } from "./acp/rules.js";
import { findWorkspace, summarize, type HearthStatus, type StatusSummary } from "./acp/status.js";
import { rewindTo, undoLastTurn } from "./checkpoints.js";
import { configInfo } from "./config.js";
import { EditorFiles } from "./files.js";
import { appendToHistory } from "./history.js";
import { mcpServersFromSetting } from "./mcp.js";
import type { CommandInfo, HostMessage, ImageAttachment, ModeInfo, SessionSummary, ViewMessage } from "./protocol.js";
import { visibleLine } from "./visible.js";

/** The modes hearth's daemon implements, shown until the agent reports its own. */
export const HEARTH_MODES: ModeInfo[] = [
  { id: "read-only", name: "Read-only", description: "Reads and searches; never edits" },
  { id: "ask", name: "Ask", description: "Asks before every edit" },
  { id: "auto-edit", name: "Auto-edit", description: "Edits files without asking" },
  { id: "full-auto", name: "Full auto", description: "Runs everything without asking" },
];

export interface ChatSink {
  post(msg: HostMessage): void;
  reveal(): void;
  readonly visible: boolean;
}

export interface DiffOpener {
  open(path: string, oldText: string | null, newText: string): Promise<void>;
}

/** A prompt sent to the agent whose turn the view has yet to show: `response` is its session/prompt answer. */
interface PendingTurn {
  text: string;
  images: ImageAttachment[];
  response: Promise<acp.PromptResponse>;
}

interface PendingPermission {
  resolve: (o: acp.RequestPermissionOutcome) => void;
  options: acp.PermissionOption[];
}

export class Controller implements vscode.Disposable {
  private client?: HearthClient;
  private clientKey = "";
  private unsubscribe: (() => void)[] = [];
  private sessionId: string | null = null;
  private sessionCwd: string | null = null;
  private sessionTitle: string | null = null;
  private busy = false;
  /** Prompts sent during the running turn, in the agent's order (it runs them after it). */
  private queued: PendingTurn[] = [];
  /**
   * The slash commands the agent offered last. Kept across sessions: hearth
   * offers the same ones to every session (right after session/new's and
   * session/load's answers), and a re-created view should suggest them.
   */
  private commands: CommandInfo[] = [];
  private history: HostMessage[] = [];
  private view?: ChatSink;
  private permSeq = 0;
  private readonly permissions = new Map<string, PendingPermission>();
  private everConnected = false;
  private readonly statusListeners = new Set<(s: StatusSummary) => void>();
  private pollTimer?: NodeJS.Timeout;
  private disposed = false;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly extensionVersion: string,
    private readonly diffs: DiffOpener,
  ) {
    this.pollTimer = setInterval(() => void this.refreshStatus(), 5000);
  }

  // ---- the connection ------------------------------------------------------

  private settingsKey(): string {
    const cfg = vscode.workspace.getConfiguration("hearth");
    return JSON.stringify([
      cfg.get<string>("path", "hearth"),
      cfg.get<Record<string, string>>("env", {}),
      cfg.get<unknown>("mcpServers", {}),
    ]);
  }

  /** The client for the current settings; a settings change takes effect on the next action without a running turn. */
  private getClient(): HearthClient {
    const key = this.settingsKey();
    if (this.client && (key === this.clientKey || this.busy)) return this.client;
    this.dropClient();
    const cfg = vscode.workspace.getConfiguration("hearth");
    const env = { ...process.env, ...cfg.get<Record<string, string>>("env", {}) };
    const mcp = mcpServersFromSetting(cfg.get<unknown>("mcpServers", {}));
    for (const p of mcp.problems) this.output.appendLine(`${p}; left out`);
    const client = new HearthClient({
      path: cfg.get<string>("path", "hearth"),
      env,
      cwd: this.workspaceRoot() ?? undefined,
      clientInfo: { name: "hearth-vscode", version: this.extensionVersion },
      onPermission: (req, signal) => this.askPermission(req, signal),
      files: new EditorFiles(),
      mcpServers: mcp.servers,
    });
    this.unsubscribe = [
      client.on("update", (n) => {
        if (n.sessionId === this.sessionId) this.onUpdate(n.update);
        // The offer follows session/new's answer at once, before this.sessionId
        // is set; hearth's commands are the same for every session.
        else if (n.update.sessionUpdate === "available_commands_update") this.setCommands(n.update);
      }),
      client.on("connected", (init) => {
        this.everConnected = true;
        this.output.appendLine(`connected to ${init.agentInfo?.name ?? "agent"} ${init.agentInfo?.version ?? ""}`);
        this.post({ type: "connection", state: "connected" });
        this.post({ type: "capabilities", steering: client.steeringSupported, fork: client.forkSupported, forkFromTurn: client.forkFromTurnSupported });
        void vscode.commands.executeCommand("setContext", "hearth.canFork", client.forkSupported).then(undefined, () => undefined);
        void this.refreshStatus();
      }),
      client.on("disconnected", (err) => {
        this.output.appendLine(err.message);
        this.post({ type: "connection", state: "disconnected", detail: err.message });
        this.emitStatus(summarize(undefined, false));
      }),
      client.on("log", (line) => this.output.appendLine(`hearth acp: ${line}`)),
    ];
    this.client = client;
    this.clientKey = key;
    return client;
  }

  private dropClient(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.client?.dispose();
    this.client = undefined;
  }

  workspaceRoot(): string | null {
    const active = vscode.window.activeTextEditor?.document.uri;
    const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    return folder && folder.uri.scheme === "file" ? folder.uri.fsPath : null;
  }

  private requireRoot(): string {
    const root = this.workspaceRoot();
    if (!root) throw new Error("Open a folder first: hearth works on a workspace folder on this machine.");
    return root;
  }

  // ---- the chat view -------------------------------------------------------

  attachView(view: ChatSink | undefined): void {
    this.view = view;
  }

  private static recorded(m: HostMessage): boolean {
    return [
      ...["reset", "modes", "config", "update", "userPrompt", "turnStarted", "turnEnded", "permission", "permissionResolved"],
      ...["turnNumber", "steered", "checkpoint", "forked"],
    ].includes(m.type);
  }

  private post(m: HostMessage): void {
    if (Controller.recorded(m)) appendToHistory(this.history, m);
    this.view?.post(m);
  }

  /** A (re)created chat view asked for everything so far. */
  private replay(): void {
    if (!this.view) return;
    if (this.history.length === 0) {
      this.view.post({ type: "reset", sessionId: this.sessionId, title: this.sessionTitle });
      this.view.post({ type: "modes", modes: [], current: null });
      this.view.post({ type: "config", options: [] });
    }
    for (const m of this.history) this.view.post(m);
    if (this.commands.length) this.view.post({ type: "commands", commands: this.commands });
    if (this.busy) this.view.post({ type: "turnStarted" });
    if (this.client?.connected) {
      this.view.post({ type: "connection", state: "connected" });
      const c = this.client;
      this.view.post({ type: "capabilities", steering: c.steeringSupported, fork: c.forkSupported, forkFromTurn: c.forkFromTurnSupported });
    } else if (this.everConnected) {
      this.view.post({ type: "connection", state: "disconnected" });
    } else {
      this.view.post({ type: "status", label: "idle", lastTurn: "", warning: false, tooltip: "hearth starts with your first action" });
    }
    void this.refreshStatus();
  }

  async handleViewMessage(m: ViewMessage): Promise<void> {
    switch (m.type) {
      case "ready":
        this.replay();
        return;
      case "prompt":
        return this.ask(m.text, m.images, m.queue === true);
      case "undo":
        return this.undo();
      case "rewind":
        return this.rewind(m.turn);
      case "fork":
        return this.fork(m.turn);
      case "cancel":
        return this.cancel();
      case "newSession":
        return this.newSession();
      case "listSessions":
        return this.run("list sessions", async () => {
          const sessions = await this.listSessions();
          this.view?.post({ type: "sessions", sessions, current: this.sessionId });
        });
      case "loadSession":
        return this.resume(m.sessionId);
      case "setMode":
        return this.setMode(m.modeId);
      case "setConfigOption":
        return this.setConfigOption(m.configId, m.value);
      case "permission":
        return this.answerPermission(m.requestId, m.optionId);
      case "openDiff":
        return this.run("open diff", () => this.diffs.open(m.path, m.oldText, m.newText));
      case "openFile":
        return this.run("open file", () => this.openFile(m.path, m.line ?? undefined));
      case "openLink":
        return this.run("open link", () => this.openLink(m.href));
      case "command":
        if (m.command === "openReadme") await vscode.env.openExternal(vscode.Uri.parse(README_URL));
        else if (m.command === "openSettings") await vscode.commands.executeCommand("workbench.action.openSettings", "hearth.path");
        else if (m.command === "showOutput") this.output.show(true);
        return;
    }
  }

  // ---- actions -----------------------------------------------------------------

  /** Runs an action, turning any failure into a message in the chat view (or a notification when it is hidden). */
  private async run(what: string, fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.reportError(what, e);
    }
  }

  private reportError(what: string, e: unknown): void {
    const message = describeError(e);
    this.output.appendLine(`${what}: ${message}`);
    if (e instanceof HearthNotFoundError) {
      this.post({ type: "error", message, action: { label: "Open the README", command: "openReadme" } });
      void vscode.window.showErrorMessage(message, "Open README", "Open Settings").then((pick) => {
        if (pick === "Open README") void vscode.env.openExternal(vscode.Uri.parse(README_URL));
        else if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "hearth.path");
      });
      return;
    }
    this.post({
      type: "error",
      message,
      action: e instanceof HearthGoneError ? { label: "Show log", command: "showOutput" } : undefined,
    });
    if (!this.view?.visible) void vscode.window.showErrorMessage(`hearth: ${message}`);
  }

  private setSession(
    id: string,
    cwd: string,
    title: string | null,
    modes: acp.SessionModeState | null | undefined,
    options: acp.SessionConfigOption[] | null | undefined,
    loading = false,
  ): void {
    this.sessionId = id;
    this.sessionCwd = cwd;
    this.sessionTitle = title;
    this.post({ type: "reset", sessionId: id, title, loading });
    this.postModes(modes);
    this.post({ type: "config", options: configInfo(options) });
  }

  private postModes(modes: acp.SessionModeState | null | undefined): void {
    if (modes && modes.availableModes.length) {
      this.post({
        type: "modes",
        modes: modes.availableModes.map((m) => ({ id: m.id, name: m.name, description: m.description ?? null })),
        current: modes.currentModeId,
      });
    } else {
      // The daemon did not report modes: offer hearth's, starting at its default.
      this.post({ type: "modes", modes: HEARTH_MODES, current: "ask" });
    }
  }

  newSession(): Promise<void> {
    return this.run("new session", async () => {
      if (this.busy) await this.cancel();
      const cwd = this.requireRoot();
      this.post({ type: "clearError" });
      const res = await this.getClient().newSession(cwd);
      this.setSession(res.sessionId, cwd, null, res.modes, res.configOptions);
    });
  }

  /**
   * Sends a prompt: its text, then its images as ACP image blocks (the
   * daemon checks their type and size). While a turn runs it steers that
   * turn (`_session/steering`, when the agent offers it), or with `queue`
   * it is sent as a prompt the agent runs after the turn.
   */
  ask(text: string, images: ImageAttachment[] = [], queue = false): Promise<void> {
    return this.run("prompt", async () => {
      if (!text.trim() && images.length === 0) return;
      this.view?.reveal();
      const client = this.getClient();
      const blocks: acp.ContentBlock[] = text.trim() ? [{ type: "text", text }] : [];
      for (const im of images) blocks.push({ type: "image", mimeType: im.mimeType, data: im.data });
      if (this.busy && this.sessionId) {
        if (!queue && client.steeringSupported) return this.steer(client, this.sessionId, text, images, blocks);
        return this.enqueue(client, this.sessionId, text, images, blocks);
      }
      this.setBusy(true);
      try {
        this.post({ type: "clearError" });
        if (!this.sessionId) {
          const cwd = this.requireRoot();
          const res = await client.newSession(cwd);
          this.setSession(res.sessionId, cwd, null, res.modes, res.configOptions);
        }
        const sessionId = this.sessionId!;
        let turn: PendingTurn | undefined = { text, images, response: client.prompt(sessionId, blocks) };
        for (; turn; turn = this.queued.shift()) {
          try {
            await this.runTurn(turn);
          } catch (e) {
            this.reportError("prompt", e);
          }
        }
      } finally {
        this.queued = [];
        if (this.busy) this.setBusy(false);
        void this.refreshStatus();
      }
    });
  }

  /** Shows one turn: its prompt, then its answer's end with the agent's number for the prompt. */
  private async runTurn(t: PendingTurn): Promise<void> {
    this.post(t.images.length ? { type: "userPrompt", text: t.text, images: t.images } : { type: "userPrompt", text: t.text });
    this.post({ type: "turnStarted" });
    void this.refreshStatus();
    try {
      const res = await t.response;
      const turn = (res._meta as Record<string, unknown> | null | undefined)?.["hearth/turn"];
      if (typeof turn === "number") this.post({ type: "turnNumber", turn });
      this.endTurn(res.stopReason);
    } catch (e) {
      this.endTurn("error");
      throw e;
    }
  }

  /** Says the turn ended; the session is idle from then on unless a queued prompt runs next. */
  private endTurn(stopReason: string): void {
    if (this.queued.length === 0) this.setBusy(false);
    this.post({ type: "turnEnded", stopReason });
  }

  /** A prompt sent during a turn: the agent queues it; it is shown when the running turn ends. */
  private enqueue(client: HearthClient, sessionId: string, text: string, images: ImageAttachment[], blocks: acp.ContentBlock[]): void {
    const response = client.prompt(sessionId, blocks);
    response.catch(() => undefined); // runTurn reports it
    this.queued.push({ text, images, response });
    this.post({ type: "queued", text, waiting: this.queued.length });
  }

  /** Steering input for the running turn, shown where the agent says it landed. */
  private async steer(client: HearthClient, sessionId: string, text: string, images: ImageAttachment[], blocks: acp.ContentBlock[]): Promise<void> {
    const outcome = await client.steer(sessionId, blocks);
    this.post(images.length ? { type: "steered", text, outcome, images } : { type: "steered", text, outcome });
  }

  private setBusy(b: boolean): void {
    this.busy = b;
    void vscode.commands.executeCommand("setContext", "hearth.busy", b).then(undefined, () => undefined);
  }

  cancel(): Promise<void> {
    return this.run("cancel", async () => {
      if (!this.busy || !this.sessionId || !this.client) return;
      await this.client.cancel(this.sessionId);
    });
  }

  /** The current session, for an action on it; an error when there is none or a turn runs. */
  private idleSession(): { client: HearthClient; sessionId: string } {
    if (!this.sessionId) throw new Error("No session yet: send a prompt first.");
    if (this.busy) throw new Error("A turn is still running: wait for it or cancel it first.");
    return { client: this.getClient(), sessionId: this.sessionId };
  }

  /** "Undo last turn": the files of the session's last turn that changed any, back as they were. */
  undo(): Promise<void> {
    return this.run("undo", () => undoLastTurn({ ...this.idleSession(), post: (m) => this.post(m) }));
  }

  /** "Restore to here": files and conversation back to before prompt `turn` (the agent's number). */
  rewind(turn: number): Promise<void> {
    return this.run("restore", () => rewindTo({ ...this.idleSession(), post: (m) => this.post(m) }, turn));
  }

  /**
   * "Fork Session": a new session with this one's history, made current;
   * the transcript stays as its history. With `turn` ("Fork from here"),
   * the history before that prompt.
   */
  fork(turn?: number): Promise<void> {
    return this.run("fork", async () => {
      const { client, sessionId } = this.idleSession();
      await client.connect();
      if (!client.forkSupported) {
        void vscode.window.showInformationMessage("hearth: this agent does not offer fork (session/fork).");
        return;
      }
      const cwd = this.sessionCwd ?? this.requireRoot();
      if (turn && !client.forkFromTurnSupported) {
        void vscode.window.showInformationMessage("hearth: this agent does not fork from a given prompt.");
        return;
      }
      const res = await client.fork(sessionId, cwd, turn);
      this.sessionId = res.sessionId;
      this.sessionCwd = cwd;
      this.post(turn ? { type: "forked", sessionId: res.sessionId, from: sessionId, turn } : { type: "forked", sessionId: res.sessionId, from: sessionId });
      this.postModes(res.modes);
      this.post({ type: "config", options: configInfo(res.configOptions) });
    });
  }

  async listSessions(): Promise<SessionSummary[]> {
    const cwd = this.workspaceRoot() ?? undefined;
    const list = await this.getClient().listSessions(cwd);
    return list.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title ?? null, updatedAt: s.updatedAt ?? null }));
  }

  resume(sessionId: string, cwd?: string): Promise<void> {
    return this.run("resume session", async () => {
      if (this.busy) throw new Error("A turn is still running: wait for it or cancel it first.");
      const root = cwd ?? this.workspaceRoot() ?? this.requireRoot();
      this.view?.reveal();
      this.post({ type: "clearError" });
      const client = this.getClient();
      await client.connect();
      this.setSession(sessionId, root, null, null, null, true);
      const res = await client.loadSession(sessionId, root);
      this.postModes(res.modes ?? client.sessionModes(sessionId));
      this.post({ type: "config", options: configInfo(res.configOptions) });
      this.post({ type: "turnEnded", stopReason: "end_turn" });
    });
  }

  setMode(modeId: string): Promise<void> {
    return this.run("set mode", async () => {
      if (!this.sessionId) {
        await this.newSession();
        if (!this.sessionId) return;
      }
      const client = this.getClient();
      await client.setMode(this.sessionId, modeId);
      const modes = client.sessionModes(this.sessionId);
      if (modes) this.postModes(modes);
      else this.post({ type: "modes", modes: HEARTH_MODES, current: modeId });
    });
  }

  /** A picker's choice: the daemon answers with every option, which the pickers then show. */
  setConfigOption(configId: string, value: string): Promise<void> {
    return this.run("set option", async () => {
      if (!this.sessionId) {
        await this.newSession();
        if (!this.sessionId) return;
      }
      const res = await this.getClient().setConfigOption(this.sessionId, configId, value);
      this.post({ type: "config", options: configInfo(res.configOptions) });
    });
  }

  private onUpdate(u: acp.SessionUpdate): void {
    if (u.sessionUpdate === "config_option_update") this.post({ type: "config", options: configInfo(u.configOptions) });
    if (u.sessionUpdate === "current_mode_update" && this.sessionId) {
      const modes = this.client?.sessionModes(this.sessionId);
      if (modes?.availableModes.length) this.postModes(modes);
    }
    if (u.sessionUpdate === "session_info_update" && typeof u.title === "string") this.sessionTitle = u.title;
    if (u.sessionUpdate === "available_commands_update") this.setCommands(u);
    this.post({ type: "update", update: u as unknown as { sessionUpdate: string } });
  }

  private setCommands(u: acp.AvailableCommandsUpdate): void {
    this.commands = u.availableCommands.map((c) => ({ name: c.name, description: c.description ?? "" }));
    this.view?.post({ type: "commands", commands: this.commands });
  }

  // ---- permissions -----------------------------------------------------------

  private askPermission(req: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionOutcome> {
    const requestId = `perm-${++this.permSeq}`;
    return new Promise<acp.RequestPermissionOutcome>((resolve) => {
      let answered = false;
      const finish = (o: acp.RequestPermissionOutcome, text: string) => {
        if (answered) return;
        answered = true;
        this.permissions.delete(requestId);
        signal.removeEventListener("abort", onAbort);
        this.post({ type: "permissionResolved", requestId, outcome: text });
        resolve(o);
      };
      const onAbort = () => finish({ outcome: "cancelled" }, "Withdrawn: the turn was cancelled or the daemon went away.");
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.permissions.set(requestId, {
        options: req.options,
        resolve: (o) => {
          const name = o.outcome === "selected" ? req.options.find((x) => x.optionId === o.optionId)?.name : undefined;
          finish(o, name ? `You chose: ${name}` : "Cancelled.");
        },
      });
      const tc = req.toolCall;
      this.post({
        type: "permission",
        requestId,
        title: tc.title ?? tc.toolCallId,
        toolCallId: tc.toolCallId,
        kind: tc.kind ?? null,
        content: tc.content ?? [],
        rawInput: tc.rawInput ?? null,
        options: req.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
      });
      this.view?.reveal();
      if (!this.view?.visible) {
        void vscode.window
          .showInformationMessage(`hearth asks: allow ${visibleLine(tc.title ?? "a tool call")}?`, "Show")
          .then((pick) => pick && this.view?.reveal());
      }
    });
  }

  private answerPermission(requestId: string, optionId: string | null): void {
    const p = this.permissions.get(requestId);
    if (!p) return;
    if (optionId && p.options.some((o) => o.optionId === optionId)) p.resolve({ outcome: "selected", optionId });
    else p.resolve({ outcome: "cancelled" });
  }

  // ---- status ------------------------------------------------------------------

  onStatus(fn: (s: StatusSummary) => void): vscode.Disposable {
    this.statusListeners.add(fn);
    return { dispose: () => this.statusListeners.delete(fn) };
  }

  private emitStatus(s: StatusSummary): void {
    for (const fn of this.statusListeners) fn(s);
    this.view?.post({ type: "status", label: s.label, lastTurn: s.lastTurn, warning: s.warning, tooltip: s.tooltip });
  }

  /** Polls `_hearth/status` when connected; never starts a daemon by itself. */
  async refreshStatus(): Promise<void> {
    if (this.disposed) return;
    const client = this.client;
    if (!client?.connected) {
      if (this.everConnected) this.emitStatus(summarize(undefined, false));
      return;
    }
    try {
      const status = await client.statusIfConnected();
      if (!status) return;
      const root = this.sessionCwd ?? this.workspaceRoot() ?? undefined;
      this.emitStatus(summarize(findWorkspace(status, root), true));
    } catch (e) {
      this.output.appendLine(`status: ${describeError(e)}`);
    }
  }

  /** `_hearth/status` now, connecting (and starting the daemon) when needed. */
  async fetchStatus(): Promise<HearthStatus> {
    return this.getClient().status();
  }

  async fetchInspect(sessionId: string): Promise<unknown> {
    return this.getClient().inspect(sessionId);
  }

  async fetchRules(): Promise<HearthRules> {
    return this.getClient().rules();
  }

  async revokeRule(id: number): Promise<number> {
    return (await this.getClient().revokeRule(id)).revoked;
  }

  /** The current session's processes; none without a session. */
  async fetchProcesses(): Promise<HearthProcesses> {
    if (!this.sessionId) return { processes: [] };
    return this.getClient().processes(this.sessionId);
  }

  /** Ends the current session's process `processId` and everything it started. */
  async killProcess(processId: number): Promise<boolean> {
    if (!this.sessionId) return false;
    return (await this.getClient().killProcess(this.sessionId, processId)).killed;
  }

  get currentSession(): string | null {
    return this.sessionId;
  }

  get currentRoot(): string | null {
    return this.sessionCwd ?? this.workspaceRoot();
  }

  /** Shows an error from a command-palette action. */
  report(what: string, e: unknown): void {
    this.reportError(what, e);
  }

  // ---- editors -----------------------------------------------------------------

  private async openFile(p: string, line?: number): Promise<void> {
    const root = this.currentRoot;
    const abs = path.isAbsolute(p) ? p : root ? path.join(root, p) : p;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
    const pos = line && line > 0 ? new vscode.Position(line - 1, 0) : undefined;
    await vscode.window.showTextDocument(doc, { preview: true, selection: pos ? new vscode.Range(pos, pos) : undefined });
  }

  private async openLink(href: string): Promise<void> {
    const uri = vscode.Uri.parse(href, false);
    if (["http", "https", "mailto"].includes(uri.scheme)) {
      await vscode.env.openExternal(uri);
    } else if (!/^[a-z][a-z0-9+.-]*:/i.test(href) || uri.scheme === "file") {
      const [file, frag] = href.replace(/^file:\/\//, "").split("#");
      const line = frag?.match(/^L?(\d+)/)?.[1];
      await this.openFile(decodeURIComponent(file), line ? Number(line) : undefined);
    }
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.pollTimer);
    for (const p of this.permissions.values()) p.resolve({ outcome: "cancelled" });
    this.dropClient();
  }
}
