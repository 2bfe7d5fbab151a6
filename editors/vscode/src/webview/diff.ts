// A line diff for showing an edit inline (the full view is VS Code's diff
// editor). Longest common subsequence over lines, trimmed of the common head
// and tail first so that typical edits stay cheap; past a size bound it gives
// up on alignment and shows the changed middle as removed + added.

export type DiffLine = { op: " " | "-" | "+"; text: string };

/** Over this many cells (old × new lines in the changed middle) no LCS is run. */
const MAX_CELLS = 4_000_000;

function splitLines(s: string): string[] {
  if (s === "") return [];
  const lines = s.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export function diffLines(oldText: string | null | undefined, newText: string): DiffLine[] {
  const a = splitLines(oldText ?? "");
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ op: " ", text: a[i] });
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  if (am.length * bm.length > MAX_CELLS) {
    for (const t of am) out.push({ op: "-", text: t });
    for (const t of bm) out.push({ op: "+", text: t });
  } else {
    // lcs[i][j] = LCS length of am[i..] and bm[j..], in one flat array.
    const n = am.length;
    const m = bm.length;
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (am[i] === bm[j]) {
        out.push({ op: " ", text: am[i] });
        i++;
        j++;
      } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
        out.push({ op: "-", text: am[i++] });
      } else {
        out.push({ op: "+", text: bm[j++] });
      }
    }
    while (i < n) out.push({ op: "-", text: am[i++] });
    while (j < m) out.push({ op: "+", text: bm[j++] });
  }
  for (let i = a.length - tail; i < a.length; i++) out.push({ op: " ", text: a[i] });
  return out;
}

/** Keeps `context` unchanged lines around each change; runs of more become one "⋯ N lines" marker. */
export type Hunked = DiffLine | { op: "…"; count: number };

export function withContext(lines: DiffLine[], context = 3): Hunked[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op === " ") return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: Hunked[] = [];
  let skipped = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (skipped) out.push({ op: "…", count: skipped });
      skipped = 0;
      out.push(l);
    } else {
      skipped++;
    }
  });
  if (skipped) out.push({ op: "…", count: skipped });
  return out;
}

export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.op === "+") added++;
    else if (l.op === "-") removed++;
  }
  return { added, removed };
}
