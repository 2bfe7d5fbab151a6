// The transcript's checkpoints: the "Restore to here" on each user message
// the agent numbered (`_meta["hearth/turn"]`), the rewound marks, and the
// card of what an undo or a rewind did.
import type { CheckpointResult } from "../protocol.js";
import { visibleLine, visibleText } from "../visible.js";

function el(tag: string, cls: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** What a numbered user message offers: "Restore to here", and "Fork from here" when the agent can. */
export interface TurnActions {
  restore(turn: number): void;
  fork(turn: number): void;
}

/**
 * Numbers user message `msg` with the agent's `turn` and gives it its
 * actions (once); `rewound` marks it as taken back by a rewind. "Fork from
 * here" shows only when the body says the agent forks from a turn.
 */
export function markTurn(msg: HTMLElement, turn: number, rewound: boolean, actions: TurnActions): void {
  if (!Number.isInteger(turn) || turn < 1) return;
  msg.dataset.turn = String(turn);
  if (rewound) setRewound(msg);
  if (msg.querySelector(":scope > .turn-actions")) return;
  const row = el("div", "turn-actions");
  const restore = el("button", "restore link-button", "Restore to here") as HTMLButtonElement;
  restore.title = `Put the files and the conversation back as they were before prompt ${turn}`;
  restore.addEventListener("click", () => actions.restore(turn));
  const fork = el("button", "fork-here link-button", "Fork from here") as HTMLButtonElement;
  fork.title = `A new session with the conversation as it was before prompt ${turn}`;
  fork.addEventListener("click", () => actions.fork(turn));
  row.append(restore, fork);
  msg.append(row);
}

/** Drops the transcript from the message of prompt `turn` on: a fork from there does not hold it. */
export function dropFrom(transcript: HTMLElement, turn: number): void {
  const msg = transcript.querySelector<HTMLElement>(`.message.user[data-turn="${turn}"]`);
  if (!msg) return;
  for (let n: Element | null = msg; n; ) {
    const next: Element | null = n.nextElementSibling;
    n.remove();
    n = next;
  }
}

function setRewound(msg: HTMLElement): void {
  msg.classList.add("rewound");
  const who = msg.querySelector(":scope > .who");
  if (who && !who.querySelector(".rewound-label")) who.append(el("span", "rewound-label", " · rewound"));
}

/** Marks the user messages of prompt `from` and later as rewound. */
export function markRewoundFrom(transcript: HTMLElement, from: number): void {
  for (const msg of transcript.querySelectorAll<HTMLElement>(".message.user[data-turn]")) {
    if (Number(msg.dataset.turn) >= from) setRewound(msg);
  }
}

const GROUPS: [keyof CheckpointResult, string][] = [
  ["restored", "Restored"],
  ["removed", "Removed (the turn created them)"],
  ["conflicts", "Conflicts: changed since, left as they are"],
  ["failed", "Could not be restored"],
  ["notRestorable", "Not restorable"],
];

/** The card of an undo's or a rewind's result: its message, the files by what happened, each conflict's diff. */
export function checkpointCard(title: string, r: CheckpointResult): HTMLElement {
  const card = el("div", "checkpoint");
  card.append(el("div", "who", title));
  if (r.message) card.append(el("div", "checkpoint-message", visibleText(r.message)));
  for (const [key, label] of GROUPS) {
    const paths = r[key];
    if (!Array.isArray(paths) || paths.length === 0) continue;
    const row = el("div", `checkpoint-files ${key}`);
    row.append(el("span", "checkpoint-label", `${label}: `), el("span", "checkpoint-paths", paths.map((p) => visibleLine(String(p))).join(", ")));
    card.append(row);
  }
  for (const d of r.conflictDiffs ?? []) {
    const det = el("details", "conflict-diff");
    det.append(el("summary", "", `Conflict: ${visibleLine(String(d.path))}`), el("pre", "diff-text", visibleText(String(d.diff))));
    card.append(det);
  }
  if (r.conflicts?.length) card.classList.add("warning");
  return card;
}
