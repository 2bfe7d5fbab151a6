// Taking a session's work back — "Undo last turn" (`_hearth/undo`) and
// "Restore to here" (`_hearth/rewind`) — with a confirmation that says what
// goes back first, and a notification of what was done after. The chat view
// shows the result itself (a "checkpoint" message).
import * as vscode from "vscode";

import type { HearthClient, RewindResult } from "./acp/client.js";
import type { CheckpointResult } from "./protocol.js";
import { visibleLine } from "./visible.js";

/** The part of the controller these actions use. */
export interface CheckpointHost {
  client: HearthClient;
  sessionId: string;
  post(m: { type: "checkpoint"; title: string; result: CheckpointResult; rewoundFrom?: number }): void;
}

const UNDO_DETAIL =
  "hearth puts the files its last turn that changed files changed back as they were before it: changed files restored, created ones removed. " +
  "A file changed since by someone else keeps its text and is named as a conflict.";

/**
 * The confirmation of an undo: the files it would restore and remove, from
 * a dry run (`preview`), when the agent answered one.
 */
export function undoDetail(preview: CheckpointResult | undefined): string {
  const lines = [UNDO_DETAIL];
  const group = (label: string, paths: string[] | undefined) => {
    if (paths?.length) lines.push("", label, ...paths.map((p) => `   ${visibleLine(p)}`));
  };
  group("To restore:", preview?.restored);
  group("To remove (created by that turn):", preview?.removed);
  group("Not restorable (their content before was not kept):", preview?.notRestorable);
  if (preview && !preview.restored?.length && !preview.removed?.length && !preview.notRestorable?.length && preview.message) {
    lines.push("", visibleLine(preview.message));
  }
  return lines.join("\n");
}

/** "Undo last turn": asks first, listing the files, then undoes and says what happened. */
export async function undoLastTurn(host: CheckpointHost): Promise<void> {
  const preview = await host.client.undoPreview(host.sessionId).catch(() => undefined);
  const pick = await vscode.window.showWarningMessage("Undo the file changes of hearth's last turn?", { modal: true, detail: undoDetail(preview) }, "Undo");
  if (pick !== "Undo") return;
  const res = await host.client.undo(host.sessionId);
  host.post({ type: "checkpoint", title: "Undo", result: res });
  notifyResult("Undo", res);
}

/**
 * The confirmation of a rewind to before prompt `turn`: the prompts whose
 * changes go back, each with the files it changed, when the agent lists
 * them.
 */
export function rewindDetail(turn: number, listing: RewindResult | undefined): string {
  const lines = [`The files and the conversation go back to before prompt ${turn}; the later turns stay in the transcript, marked rewound.`];
  const taken = (listing?.turns ?? []).filter((t) => t.turn >= turn && !t.rewound);
  if (taken.length) {
    lines.push("", "Taken back:");
    for (const t of taken) {
      lines.push(`${t.turn}. ${visibleLine(t.prompt)} (${t.files} file${t.files === 1 ? "" : "s"} changed)`);
      const paths = t.paths ?? [];
      lines.push(...paths.map((p) => `   ${visibleLine(p)}`));
      if (paths.length && t.files > paths.length) lines.push(`   … and ${t.files - paths.length} more`);
    }
    const files = taken.reduce((n, t) => n + t.files, 0);
    lines.push("", `Files changed by these turns: ${files}. A file changed since by someone else keeps its text and is named as a conflict.`);
  }
  return lines.join("\n");
}

/** "Restore to here": asks with what goes back, then rewinds and says what happened. */
export async function rewindTo(host: CheckpointHost, turn: number): Promise<void> {
  const listing = await host.client.rewind(host.sessionId).catch(() => undefined);
  const pick = await vscode.window.showWarningMessage(
    `Restore to before prompt ${turn}?`,
    { modal: true, detail: rewindDetail(turn, listing) },
    "Restore",
  );
  if (pick !== "Restore") return;
  const res = await host.client.rewind(host.sessionId, turn);
  host.post(res.rewound ? { type: "checkpoint", title: `Restored to before prompt ${turn}`, result: res, rewoundFrom: turn } : { type: "checkpoint", title: "Restore", result: res });
  notifyResult("Restore", res);
}

/** One line of what an undo or rewind did: a warning when files stayed as they are. */
export function summarizeResult(what: string, r: CheckpointResult): string {
  const parts: string[] = [];
  const count = (n: number | undefined, label: string) => {
    if (n) parts.push(`${n} ${label}`);
  };
  count(r.restored?.length, "restored");
  count(r.removed?.length, "removed");
  count(r.conflicts?.length, r.conflicts?.length === 1 ? "conflict" : "conflicts");
  count(r.failed?.length, "failed");
  count(r.notRestorable?.length, "not restorable");
  return parts.length ? `hearth: ${what}: ${parts.join(", ")}.` : `hearth: ${visibleLine(r.message ?? `${what}: nothing changed.`)}`;
}

function notifyResult(what: string, r: CheckpointResult): void {
  const text = summarizeResult(what, r);
  if (r.conflicts?.length || r.failed?.length) void vscode.window.showWarningMessage(text);
  else void vscode.window.showInformationMessage(text);
}
