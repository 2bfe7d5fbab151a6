// hearth's `_hearth/status` wire types (rpc/status.go) and how the editor
// summarises them.
import { realpathSync } from "node:fs";
import * as path from "node:path";

export type WorkspaceState =
  | "connecting"
  | "warming"
  | "ready"
  | "streaming"
  | "re-warming"
  | "http-fallback"
  | "closed";

export interface WorkspaceStatus {
  root: string;
  state: WorkspaceState | string;
  transport: string;
  connAgeMs?: number;
  sessions?: number;
  lanes?: number;
  handshakes: number;
  warmups: number;
  fullRequests: number;
  incrementalRequests: number;
  retries?: number;
  fallbacks?: number;
  bytesSent: number;
  bytesSaved: number;
  lastTurnMs: number;
}

export interface HearthStatus {
  version: string;
  pid: number;
  started?: string;
  socket: string;
  dataDir?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  simulator?: boolean;
  clients?: number;
  workspaces: WorkspaceStatus[];
}

/** What the status bar shows. */
export interface StatusSummary {
  /** A short word: warming, ready, streaming, reconnecting, http-fallback, closed, idle, offline. */
  label: string;
  /** The codicon for the state. */
  icon: string;
  /** Whether the state is degraded (shown with a warning colour). */
  warning: boolean;
  /** The last turn's duration, "" when no turn completed yet. */
  lastTurn: string;
  tooltip: string;
}

function canonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The workspace of `status` whose root is `root` (symlinks resolved), if any. */
export function findWorkspace(status: HearthStatus | undefined, root: string | undefined): WorkspaceStatus | undefined {
  if (!status || !root) return undefined;
  const want = [path.resolve(root), canonical(root)];
  return status.workspaces.find((w) => want.includes(path.resolve(w.root)) || want.includes(canonical(w.root)));
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m ${s}s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Summarises the connection of one workspace. `connected` is false when the
 * relay to the daemon is down (it is restarted on the next action).
 */
export function summarize(ws: WorkspaceStatus | undefined, connected: boolean): StatusSummary {
  if (!connected) {
    return {
      label: "reconnecting",
      icon: "debug-disconnect",
      warning: true,
      lastTurn: "",
      tooltip: "hearth: the daemon is not connected; it is started again on your next action",
    };
  }
  if (!ws) {
    return { label: "idle", icon: "flame", warning: false, lastTurn: "", tooltip: "hearth: no session in this workspace yet" };
  }
  const lastTurn = formatDuration(ws.lastTurnMs);
  let label: string;
  let icon: string;
  let warning = false;
  switch (ws.state) {
    case "connecting":
      label = ws.handshakes > 0 ? "reconnecting" : "connecting";
      icon = "sync~spin";
      warning = ws.handshakes > 0;
      break;
    case "warming":
      label = "warming";
      icon = "sync~spin";
      break;
    case "re-warming":
      label = "reconnecting";
      icon = "sync~spin";
      warning = true;
      break;
    case "ready":
      label = "ready";
      icon = "flame";
      break;
    case "streaming":
      label = "streaming";
      icon = "loading~spin";
      break;
    case "http-fallback":
      label = "http-fallback";
      icon = "warning";
      warning = true;
      break;
    case "closed":
      label = "closed";
      icon = "circle-slash";
      warning = true;
      break;
    default:
      label = String(ws.state);
      icon = "question";
  }
  const tooltip = [
    `hearth: ${ws.root}`,
    `state ${ws.state} over ${ws.transport}`,
    `requests: ${ws.incrementalRequests} incremental, ${ws.fullRequests} full; ${ws.warmups} warm-ups, ${ws.handshakes} handshakes`,
    `sent ${formatBytes(ws.bytesSent)}, saved ${formatBytes(ws.bytesSaved)}`,
    lastTurn ? `last turn ${lastTurn}` : "no turn yet",
  ].join("\n");
  return { label, icon, warning, lastTurn, tooltip };
}

/** The status as a Markdown document (for "Hearth: Show Status"). */
export function statusMarkdown(status: HearthStatus, root?: string): string {
  const lines: string[] = [];
  lines.push(`# hearth status`, "");
  lines.push(`| | |`, `|---|---|`);
  lines.push(`| version | ${status.version} |`);
  lines.push(`| pid | ${status.pid} |`);
  lines.push(`| socket | \`${status.socket}\` |`);
  if (status.dataDir) lines.push(`| data | \`${status.dataDir}\` |`);
  if (status.model !== undefined) lines.push(`| model | ${status.model || "(default)"} |`);
  if (status.baseUrl) lines.push(`| API | ${status.baseUrl}${status.simulator ? " (built-in simulator)" : ""} |`);
  if (status.apiKey) lines.push(`| API key | ${status.apiKey} |`);
  // clients counts the daemon's connections other than the one asking: this window's.
  if (status.clients !== undefined) lines.push(`| other clients connected | ${status.clients} |`);
  lines.push("", "## Workspaces", "");
  if (status.workspaces.length === 0) {
    lines.push("No workspace is open in the daemon.");
  } else {
    lines.push(
      "| root | state | transport | last turn | incremental | full | warm-ups | handshakes | sent | saved |",
      "|---|---|---|---|---|---|---|---|---|---|",
    );
    const mine = findWorkspace(status, root);
    for (const w of status.workspaces) {
      const name = w === mine ? `**${w.root}** (this window)` : w.root;
      lines.push(
        `| ${name} | ${w.state} | ${w.transport} | ${formatDuration(w.lastTurnMs) || "—"} | ${w.incrementalRequests} | ${w.fullRequests} | ${w.warmups} | ${w.handshakes} | ${formatBytes(w.bytesSent)} | ${formatBytes(w.bytesSaved)} |`,
      );
    }
  }
  lines.push("");
  return lines.join("\n");
}
