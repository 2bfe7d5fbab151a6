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

/**
 * Numbers user message `msg` with the agent's `turn` and gives it a
 * "Restore to here" (once); `rewound` marks it as taken back by a rewind.
 */
export function markTurn(msg: HTMLElement, turn: number, rewound: boolean, onRestore: (turn: number) => void): void {
  if (!Number.isInteger(turn) || turn < 1) return;
  msg.dataset.turn = String(turn);
  if (rewound) setRewound(msg);
  if (msg.querySelector(":scope > .restore")) return;
  const b = el("button", "restore link-button", "Restore to here") as HTMLButtonElement;
  b.title = `Put the files and the conversation back as they were before prompt ${turn}`;
  b.addEventListener("click", () => onRestore(turn));
  msg.append(b);
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
