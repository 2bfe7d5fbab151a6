// The chat view's script: renders what the extension posts (HostMessage) and
// posts the user's actions back (ViewMessage). Bundled by esbuild into
// dist/webview.js; plain DOM, no framework.
import MarkdownIt from "markdown-it";

import { contextLeft, pickerOption } from "../config.js";
import type { AcpUpdate, CommandInfo, ConfigOptionInfo, HostMessage, ImageAttachment, ModeInfo, PermissionOptionInfo, SessionSummary, ViewMessage } from "../protocol.js";
import { diffLines, diffStats, withContext } from "./diff.js";
import { thoughtPreview } from "./thought.js";
import { checkpointCard, dropFrom, markRewoundFrom, markTurn, type TurnActions } from "./turns.js";
import { hasControls, visibleLine, visibleText } from "../visible.js";

interface VsCodeApi {
  postMessage(msg: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (m: ViewMessage) => vscode.postMessage(m);

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el;
}

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; title?: string; attrs?: Record<string, string> } = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.title) el.title = props.title;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) el.append(c);
  return el;
}

const transcript = $("transcript");
const empty = $("empty");
const input = $("input") as HTMLTextAreaElement;
const sendBtn = $("btn-send") as HTMLButtonElement;
const cancelBtn = $("btn-cancel") as HTMLButtonElement;
const queueBtn = $("btn-queue") as HTMLButtonElement;
const forkBtn = $("btn-fork") as HTMLButtonElement;
const modeSelect = $("mode-select") as HTMLSelectElement;
const modelRow = $("model-row");
const modelSelect = $("model-select") as HTMLSelectElement;
const effortSelect = $("effort-select") as HTMLSelectElement;
const effortLabel = $("effort-label");
const contextChip = $("context-left");
const sessionTitle = $("session-title");
const connection = $("connection");
const turnState = $("turn-state");
const errorBox = $("error");
const errorText = $("error-text");
const errorAction = $("error-action") as HTMLButtonElement;
const sessionsPanel = $("sessions");
const sessionList = $("session-list");
const attachmentsRow = $("attachments");
const commandList = $("commands");
const planPanel = $("plan");

// ---- transcript state ------------------------------------------------------

interface ToolState {
  el: HTMLElement;
  data: Record<string, unknown>;
}

interface TextBlock {
  el: HTMLElement;
  text: string;
  messageId: string | null;
  kind: "agent" | "user" | "thought";
}

let busy = false;
/** What the agent offers (a "capabilities" message): steering a running turn, forking. */
let canSteer = false;
/** The user message of the running turn: its turnEnded gives it the agent's number. */
let turnPrompt: HTMLElement | null = null;
const turnActions: TurnActions = {
  restore: (turn) => post({ type: "rewind", turn }),
  fork: (turn) => post({ type: "fork", turn }),
};
let tools = new Map<string, ToolState>();
let current: TextBlock | null = null;
const permissions = new Map<string, HTMLElement>();
let renderQueued = new Set<TextBlock>();
let frameRequested = false;

const raf: (f: () => void) => void =
  typeof requestAnimationFrame === "function" ? (f) => requestAnimationFrame(f) : (f) => setTimeout(f, 16);

function nearBottom(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
}

function append(el: HTMLElement): void {
  const stick = nearBottom();
  empty.hidden = true;
  transcript.append(el);
  if (stick) transcript.scrollTop = transcript.scrollHeight;
}

function resetTranscript(): void {
  for (const child of [...transcript.children]) if (child !== empty) child.remove();
  empty.hidden = false;
  tools = new Map();
  current = null;
  permissions.clear();
  renderQueued = new Set();
  renderPlan({ sessionUpdate: "plan", entries: [] });
}

function flushRenders(): void {
  frameRequested = false;
  const stick = nearBottom();
  for (const b of renderQueued) renderText(b);
  renderQueued.clear();
  if (stick) transcript.scrollTop = transcript.scrollHeight;
}

function renderText(b: TextBlock): void {
  const body = b.el.querySelector(".body") as HTMLElement;
  if (b.kind === "user") {
    body.textContent = b.text;
  } else {
    body.innerHTML = md.render(b.text);
  }
  if (b.kind === "thought") renderThoughtHeader(b);
}

/**
 * The one line a collapsed thought shows: "Thinking…" while it streams, then
 * "Thought" and its first words (its bold title when it opens with one, as
 * reasoning summaries do).
 */
function renderThoughtHeader(b: TextBlock): void {
  const live = b === current && b.el.classList.contains("streaming");
  const label = b.el.querySelector(".thought-label") as HTMLElement;
  const preview = b.el.querySelector(".thought-preview") as HTMLElement;
  const words = live ? "" : thoughtPreview(b.text);
  label.textContent = live ? "Thinking…" : "Thought";
  preview.textContent = words ? ` · ${words}` : "";
}

/** Ends the current text block: the next text starts a new one; a thought gets its final header. */
function endBlock(): void {
  const b = current;
  current = null;
  if (b?.kind === "thought") {
    b.el.classList.remove("streaming");
    renderQueued.delete(b);
    renderText(b);
  }
}

function textBlock(kind: TextBlock["kind"], messageId: string | null): TextBlock {
  if (current && current.kind === kind && (messageId === null || current.messageId === null || current.messageId === messageId)) {
    return current;
  }
  endBlock();
  let el: HTMLElement;
  if (kind === "thought") {
    // Collapsed until the user opens it.
    el = h(
      "details",
      { class: "message thought" },
      h("summary", {}, h("span", { class: "thought-label", text: "Thinking…" }), h("span", { class: "thought-preview" })),
      h("div", { class: "body markdown" }),
    );
  } else {
    el = h(
      "div",
      { class: `message ${kind}` },
      h("div", { class: "who", text: kind === "user" ? "You" : "hearth" }),
      h("div", { class: kind === "user" ? "body" : "body markdown" }),
    );
  }
  append(el);
  current = { el, text: "", messageId, kind };
  return current;
}

function addText(kind: TextBlock["kind"], update: AcpUpdate): void {
  const content = update.content as { type?: string; text?: string; uri?: string; name?: string; mimeType?: string; data?: string } | undefined;
  if (content?.type === "image") {
    addImage(kind, content);
    return;
  }
  let text = "";
  if (content?.type === "text") text = content.text ?? "";
  else if (content?.type === "resource_link") text = `[${content.name ?? content.uri}](${content.uri})`;
  else if (content?.type) text = `\n*[${content.type} content]*\n`;
  const b = textBlock(kind, (update.messageId as string | undefined) ?? null);
  const meta = update._meta as Record<string, unknown> | undefined;
  if (kind === "user" && typeof meta?.["hearth/turn"] === "number") markTurn(b.el, meta["hearth/turn"], meta["hearth/rewound"] === true, turnActions);
  b.text += text;
  b.el.classList.toggle("streaming", busy && kind !== "user");
  renderQueued.add(b);
  if (!frameRequested) {
    frameRequested = true;
    raf(flushRenders);
  }
}

// ---- images ------------------------------------------------------------------

/** The image types the model accepts; hearth refuses others. */
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** hearth's limit per image, decoded (workspace.MaxImageBytes). */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** An <img> showing base64 data of one of IMAGE_TYPES; null for anything else. */
function imageElement(mimeType: unknown, data: unknown, cls: string): HTMLImageElement | null {
  if (typeof mimeType !== "string" || typeof data !== "string" || !IMAGE_TYPES.includes(mimeType) || !/^[A-Za-z0-9+/=\s]*$/.test(data)) return null;
  return h("img", { class: cls, attrs: { src: `data:${mimeType};base64,${data}`, alt: `${mimeType.slice(6).toUpperCase()} image` } });
}

/** Shows an image of a user's or the agent's message, under the message's text. */
function addImage(kind: TextBlock["kind"], content: { mimeType?: string; data?: string }): void {
  const img = imageElement(content.mimeType, content.data, "message-image");
  if (!img) return;
  const b = textBlock(kind, null);
  let row = b.el.querySelector(":scope > .images");
  if (!row) {
    row = h("div", { class: "images" });
    b.el.append(row);
  }
  const stick = nearBottom();
  row.append(img);
  if (stick) transcript.scrollTop = transcript.scrollHeight;
}

let attachments: ImageAttachment[] = [];

function renderAttachments(): void {
  attachmentsRow.replaceChildren();
  attachments.forEach((a, i) => {
    const remove = h("button", { class: "remove-attachment", text: "×", title: "Remove this image", attrs: { "aria-label": "Remove image" } });
    remove.addEventListener("click", () => {
      attachments = attachments.filter((_, j) => j !== i);
      renderAttachments();
    });
    attachmentsRow.append(h("span", { class: "attachment" }, imageElement(a.mimeType, a.data, "attachment-image"), remove));
  });
  attachmentsRow.hidden = attachments.length === 0;
}

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject(r.error ?? new Error("the image could not be read"));
    r.readAsDataURL(file);
  });
}

/** Attaches a pasted image to the next prompt, after the checks hearth would make anyway. */
async function attach(file: File): Promise<void> {
  if (!IMAGE_TYPES.includes(file.type)) {
    showError(`hearth sends PNG, JPEG, GIF and WebP images to the model; this one is ${file.type || "of an unknown type"}.`);
    return;
  }
  if (file.size > MAX_IMAGE_BYTES) {
    showError(`The image is ${(file.size / 1048576).toFixed(1)} MiB; hearth sends images of at most 20 MiB. Crop or shrink it.`);
    return;
  }
  try {
    attachments.push({ mimeType: file.type, data: await readAsBase64(file) });
  } catch (e) {
    showError(`The pasted image could not be read: ${String(e)}`);
    return;
  }
  renderAttachments();
}

// ---- tool calls --------------------------------------------------------------

const STATUS_ICON: Record<string, string> = { pending: "◌", in_progress: "◐", completed: "✓", failed: "✗" };

function toolCall(update: AcpUpdate, isNew: boolean): void {
  const id = String(update.toolCallId ?? "");
  let t = tools.get(id);
  if (!t) {
    const el = h("div", { class: "tool", attrs: { "data-tool-call-id": id } });
    t = { el, data: {} };
    tools.set(id, t);
    // The permission request can come before its tool call: the tool call
    // takes the card's place and the card moves into it.
    const card = [...permissions.values()].find((c) => c.dataset.toolCallId === id && c.parentElement === transcript);
    if (card) {
      card.replaceWith(el);
      el.append(card);
    } else {
      append(el);
    }
  } else if (isNew) {
    t.data = {};
  }
  for (const [k, v] of Object.entries(update)) {
    if (k === "sessionUpdate" || v === undefined || v === null) continue;
    t.data[k] = v;
  }
  renderTool(t);
  endBlock(); // text after a tool call starts a new message
}

function renderTool(t: ToolState): void {
  const d = t.data as {
    toolCallId: string;
    title?: string;
    kind?: string;
    status?: string;
    content?: unknown[];
    locations?: { path: string; line?: number | null }[];
    rawInput?: unknown;
  };
  const status = d.status ?? "pending";
  t.el.className = `tool status-${status}`;
  t.el.dataset.status = status;
  const pendingPermission = t.el.querySelector(":scope > .permission");
  // While its card shows what it asks about, the call's own diff or command
  // is not shown twice.
  const shownByCard = !!pendingPermission?.querySelector(":scope > .permission-subject");
  t.el.replaceChildren();
  const head = h(
    "div",
    { class: "tool-head" },
    h("span", { class: "tool-icon", text: STATUS_ICON[status] ?? "•", attrs: { "aria-hidden": "true" } }),
    h("span", { class: "tool-title", text: visibleLine(d.title ?? "tool call") }),
    d.kind ? h("span", { class: "tool-kind", text: d.kind }) : null,
    h("span", { class: "tool-status", text: status.replace("_", " ") }),
  );
  t.el.append(head);
  const locs = (d.locations ?? []).filter((l) => l && typeof l.path === "string");
  if (locs.length) {
    const row = h("div", { class: "tool-locations" });
    for (const l of locs) {
      const a = h("a", { class: "file-link", text: visibleLine(l.line ? `${l.path}:${l.line}` : l.path), attrs: { href: "#" } });
      a.addEventListener("click", (e) => {
        e.preventDefault();
        post({ type: "openFile", path: l.path, line: l.line ?? null });
      });
      row.append(a);
    }
    t.el.append(row);
  }
  const content = Array.isArray(d.content) && !shownByCard ? d.content : [];
  if (content.length === 0 && !shownByCard && d.rawInput !== undefined && status !== "completed") {
    t.el.append(h("div", { class: "tool-input muted", text: visibleLine(compact(d.rawInput)) }));
  }
  for (const c of content) {
    const item = c as { type?: string; content?: { type?: string; text?: string }; path?: string; oldText?: string | null; newText?: string; terminalId?: string };
    if (item.type === "diff" && typeof item.path === "string" && typeof item.newText === "string") {
      t.el.append(renderDiff(item.path, item.oldText ?? null, item.newText));
    } else if (item.type === "content" && item.content?.type === "text") {
      const text = visibleText(item.content.text ?? "");
      const lines = text.split("\n");
      if (lines.length <= 12) {
        t.el.append(h("pre", { class: "tool-output", text }));
      } else if (status === "in_progress") {
        // A command's output as it comes: its last lines, the earlier ones folded.
        const earlier = h("details", { class: "tool-more" }, h("summary", { text: `${lines.length - 12} earlier lines` }), h("pre", { class: "tool-output", text: lines.slice(0, -12).join("\n") }));
        t.el.append(earlier, h("pre", { class: "tool-output live", text: lines.slice(-12).join("\n") }));
      } else {
        const more = h("details", { class: "tool-more" }, h("summary", { text: `${lines.length - 12} more lines` }), h("pre", { class: "tool-output", text: lines.slice(12).join("\n") }));
        t.el.append(h("pre", { class: "tool-output", text: lines.slice(0, 12).join("\n") }), more);
      }
    } else if (item.type === "content" && item.content?.type === "image") {
      const c = item.content as { mimeType?: string; data?: string };
      const img = imageElement(c.mimeType, c.data, "tool-image");
      if (img) t.el.append(img);
    } else if (item.type === "terminal") {
      t.el.append(h("div", { class: "muted", text: `terminal ${item.terminalId ?? ""}` }));
    }
  }
  if (pendingPermission) t.el.append(pendingPermission);
}

function compact(v: unknown): string {
  try {
    const s = JSON.stringify(v);
    return s.length > 200 ? s.slice(0, 197) + "…" : s;
  } catch {
    return String(v);
  }
}

function renderDiff(path: string, oldText: string | null, newText: string): HTMLElement {
  const lines = diffLines(oldText, newText);
  const { added, removed } = diffStats(lines);
  const shownPath = visibleLine(path);
  const open = h("button", { class: "link-button open-diff", text: "Open diff", title: `Compare ${shownPath} in the diff editor` });
  open.addEventListener("click", () => post({ type: "openDiff", path, oldText, newText }));
  const head = h(
    "div",
    { class: "diff-head" },
    h("span", { class: "diff-path", text: shownPath, title: shownPath }),
    h("span", { class: "diff-added", text: `+${added}` }),
    h("span", { class: "diff-removed", text: `−${removed}` }),
    oldText === null ? h("span", { class: "tool-kind", text: "new file" }) : null,
    open,
  );
  const body = h("div", { class: "diff-body" });
  const shown = withContext(lines, 2);
  let count = 0;
  for (const l of shown) {
    if (count++ > 80) {
      body.append(h("div", { class: "diff-line diff-skip", text: "⋯ open the diff to see the rest" }));
      break;
    }
    if (l.op === "…") {
      body.append(h("div", { class: "diff-line diff-skip", text: `⋯ ${l.count} unchanged line${l.count === 1 ? "" : "s"}` }));
    } else {
      const cls = l.op === "+" ? "diff-line diff-add" : l.op === "-" ? "diff-line diff-del" : "diff-line";
      body.append(h("div", { class: cls }, h("span", { class: "diff-op", text: l.op }), h("span", { text: visibleText(l.text) })));
    }
  }
  return h("div", { class: "diff", attrs: { "data-path": path } }, head, body);
}

// ---- plan ----------------------------------------------------------------------

// The agent's plan is one checklist pinned above the prompt box: each plan
// update is the whole list (ACP), so it replaces what is shown; an empty
// list (or a new session) hides it. A replayed session shows its last plan.
function renderPlan(update: AcpUpdate): void {
  const entries = Array.isArray(update.entries) ? (update.entries as { content?: unknown; status?: unknown }[]) : [];
  const ul = h("ul");
  let done = 0;
  for (const e of entries) {
    const status = e?.status === "completed" || e?.status === "in_progress" ? e.status : "pending";
    if (status === "completed") done++;
    const mark = status === "completed" ? "✓" : status === "in_progress" ? "◐" : "○";
    ul.append(h("li", { class: `plan-${status}`, attrs: { "data-status": status } }, h("span", { class: "plan-mark", text: mark }), ` ${visibleLine(String(e?.content ?? ""))}`));
  }
  planPanel.replaceChildren(h("div", { class: "who", text: `Plan · ${done}/${entries.length} done` }), ul);
  planPanel.hidden = entries.length === 0;
}

// ---- permissions -------------------------------------------------------------

const OPTION_CLASS: Record<string, string> = {
  allow_once: "allow",
  allow_always: "allow",
  reject_once: "reject",
  reject_always: "reject",
};

/**
 * What a permission request asks about, from its tool call: each diff (old
 * and new text) and each command, or for a command with no content its
 * rawInput.command. Null when the request says nothing more than its title.
 * A command is one line, exactly as it runs, its control characters
 * escaped, and a line under it says so when it holds any.
 */
function permissionSubject(m: Extract<HostMessage, { type: "permission" }>): HTMLElement | null {
  const subject = h("div", { class: "permission-subject" });
  let hidden = false;
  const command = (text: string) => {
    hidden ||= hasControls(text);
    subject.append(h("pre", { class: "permission-command", text: visibleLine(text) }));
  };
  for (const c of Array.isArray(m.content) ? m.content : []) {
    const item = c as { type?: string; content?: { type?: string; text?: string }; path?: string; oldText?: string | null; newText?: string };
    if (item.type === "diff" && typeof item.path === "string" && typeof item.newText === "string") {
      subject.append(renderDiff(item.path, item.oldText ?? null, item.newText));
    } else if (item.type === "content" && item.content?.type === "text" && item.content.text) {
      command(item.content.text);
    }
  }
  const raw = (m.rawInput as { command?: unknown } | null | undefined)?.command;
  if (!subject.hasChildNodes() && m.kind === "execute" && typeof raw === "string") {
    command(`$ ${raw}`);
  }
  if (hidden) {
    subject.append(h("div", { class: "permission-warning", text: "The command contains control characters, shown escaped (\\x1b is ESC, \\r a carriage return, \\n a newline)." }));
  }
  return subject.hasChildNodes() ? subject : null;
}

function showPermission(m: Extract<HostMessage, { type: "permission" }>): void {
  const buttons = h("div", { class: "permission-buttons" });
  const attrs: Record<string, string> = { "data-request-id": m.requestId, role: "group", "aria-label": "Permission request" };
  if (m.toolCallId) attrs["data-tool-call-id"] = m.toolCallId;
  const card = h(
    "div",
    { class: "permission", attrs },
    h("div", { class: "permission-title" }, h("strong", { text: "Allow " }), h("span", { text: visibleLine(m.title) }), h("strong", { text: "?" })),
    permissionSubject(m),
    buttons,
  );
  for (const o of orderOptions(m.options)) {
    const b = h("button", {
      class: `permission-option ${OPTION_CLASS[o.kind] ?? ""} ${o.kind.endsWith("always") ? "always" : ""}`,
      text: o.name,
      attrs: { "data-option-id": o.optionId, "data-kind": o.kind },
    });
    b.addEventListener("click", () => {
      for (const other of buttons.querySelectorAll("button")) (other as HTMLButtonElement).disabled = true;
      b.classList.add("chosen");
      post({ type: "permission", requestId: m.requestId, optionId: o.optionId });
    });
    buttons.append(b);
  }
  permissions.set(m.requestId, card);
  const tool = m.toolCallId ? tools.get(m.toolCallId) : undefined;
  const stick = nearBottom();
  if (tool) {
    tool.el.append(card);
    renderTool(tool); // its own diff or command gives way to the card's
    empty.hidden = true;
  } else {
    append(card);
  }
  if (stick) transcript.scrollTop = transcript.scrollHeight;
  const first = buttons.querySelector("button") as HTMLButtonElement | null;
  first?.focus({ preventScroll: true });
}

function orderOptions(options: PermissionOptionInfo[]): PermissionOptionInfo[] {
  const rank = (k: string) => ["allow_once", "allow_always", "reject_once", "reject_always"].indexOf(k);
  return [...options].sort((a, b) => (rank(a.kind) === -1 ? 9 : rank(a.kind)) - (rank(b.kind) === -1 ? 9 : rank(b.kind)));
}

function resolvePermission(requestId: string, outcome: string): void {
  const card = permissions.get(requestId);
  if (!card) return;
  permissions.delete(requestId);
  card.classList.add("resolved");
  for (const b of card.querySelectorAll(".permission-buttons button")) (b as HTMLButtonElement).disabled = true;
  card.append(h("div", { class: "permission-outcome muted", text: outcome }));
  // Answered: the tool call shows its own diff or command again, when it
  // has one; a card on its own keeps what it asked about.
  const tool = [...tools.values()].find((t) => t.el.contains(card));
  if (tool && Array.isArray(tool.data.content) && tool.data.content.length > 0) {
    card.querySelector(":scope > .permission-subject")?.remove();
    renderTool(tool);
  }
}

// ---- toolbar, composer, sessions ---------------------------------------------

function setBusy(b: boolean): void {
  busy = b;
  document.body.classList.toggle("busy", b);
  cancelBtn.hidden = !b;
  queueBtn.hidden = !b;
  sendBtn.textContent = b && canSteer ? "Steer" : "Send";
  sendBtn.title = b ? (canSteer ? "Enter: give the running turn this input" : "Enter: run after this turn") : "Enter";
  turnState.textContent = b ? "Working…" : "";
  if (!b) for (const el of transcript.querySelectorAll(".streaming")) el.classList.remove("streaming");
}

function setModes(modes: ModeInfo[], currentMode: string | null): void {
  modeSelect.replaceChildren();
  for (const m of modes) {
    const o = h("option", { text: m.name, title: m.description ?? "", attrs: { value: m.id } });
    modeSelect.append(o);
  }
  modeSelect.disabled = modes.length === 0;
  if (currentMode !== null) modeSelect.value = currentMode;
  modeSelect.dataset.current = currentMode ?? "";
}

/** Fills a config option's picker: hidden when the agent offers no such option. */
function fillPicker(select: HTMLSelectElement, o: ConfigOptionInfo | undefined): void {
  select.replaceChildren();
  select.hidden = !o;
  if (!o) return;
  select.dataset.configId = o.id;
  select.title = o.description ?? o.name;
  for (const v of o.values) select.append(h("option", { text: visibleLine(v.name), title: v.description ?? "", attrs: { value: v.value } }));
  select.value = o.current;
  select.dataset.current = o.current;
}

/** The model and effort pickers, from the session's config options. */
function setConfig(options: ConfigOptionInfo[]): void {
  const model = pickerOption(options, "model");
  const effort = pickerOption(options, "thought_level");
  fillPicker(modelSelect, model);
  fillPicker(effortSelect, effort);
  effortLabel.hidden = !effort;
  modelRow.hidden = !model && !effort && contextChip.hidden;
}

function pickerChanged(select: HTMLSelectElement): void {
  const want = select.value;
  // Show the confirmed value until the agent answers (a "config" message).
  select.value = select.dataset.current ?? want;
  if (select.dataset.configId) post({ type: "setConfigOption", configId: select.dataset.configId, value: want });
}

/** "context left" from a usage_update. */
function setUsage(u: AcpUpdate): void {
  const text = contextLeft(u.used, u.size);
  contextChip.textContent = text;
  contextChip.title = text ? `${Number(u.used).toLocaleString()} of ${Number(u.size).toLocaleString()} tokens in the model's context` : "";
  contextChip.hidden = !text;
  modelRow.hidden = modelRow.hidden && !text;
}

function showError(message: string, action?: { label: string; command: string }): void {
  errorText.textContent = message;
  errorBox.hidden = false;
  if (action) {
    errorAction.textContent = action.label;
    errorAction.dataset.command = action.command;
    errorAction.hidden = false;
  } else {
    errorAction.hidden = true;
  }
}

function showSessions(list: SessionSummary[], currentId: string | null): void {
  sessionList.replaceChildren();
  if (list.length === 0) sessionList.append(h("li", { class: "muted", text: "No sessions in this workspace yet." }));
  for (const s of list) {
    const when = s.updatedAt ? new Date(s.updatedAt) : null;
    const label = s.title || `Session ${s.sessionId.slice(0, 12)}…`;
    const li = h(
      "li",
      { class: s.sessionId === currentId ? "session current" : "session", attrs: { tabindex: "0", "data-session-id": s.sessionId } },
      h("span", { class: "session-name", text: label }),
      h("span", { class: "muted", text: when && !isNaN(when.getTime()) ? when.toLocaleString() : "" }),
    );
    const pick = () => {
      sessionsPanel.hidden = true;
      post({ type: "loadSession", sessionId: s.sessionId });
    };
    li.addEventListener("click", pick);
    li.addEventListener("keydown", (e) => {
      if (e.key === "Enter") pick();
    });
    sessionList.append(li);
  }
  sessionsPanel.hidden = false;
}

// ---- slash commands ------------------------------------------------------------

let commands: CommandInfo[] = [];
let suggested: CommandInfo[] = [];
let selected = 0;
/** Escape closed the list: it stays closed until the text changes. */
let dismissed = false;

/** The commands a prompt that is one word starting with "/" may be the start of. */
function matchingCommands(): CommandInfo[] {
  const v = input.value;
  if (dismissed || !/^\/\S*$/.test(v)) return [];
  const list = commands.filter((c) => c.name.startsWith(v.slice(1)));
  // A complete command, and nothing longer: the list has nothing to add.
  return list.length === 1 && `/${list[0].name}` === v ? [] : list;
}

function renderCommands(): void {
  suggested = matchingCommands();
  selected = Math.min(selected, Math.max(0, suggested.length - 1));
  commandList.replaceChildren();
  suggested.forEach((c, i) => {
    const li = h(
      "li",
      { class: i === selected ? "command selected" : "command", attrs: { role: "option", "aria-selected": String(i === selected), "data-command": c.name } },
      h("span", { class: "command-name", text: `/${c.name}` }),
      h("span", { class: "command-description muted", text: c.description }),
    );
    // mousedown, not click: the textarea keeps the focus.
    li.addEventListener("mousedown", (e) => {
      e.preventDefault();
      completeCommand(c);
    });
    commandList.append(li);
  });
  commandList.hidden = suggested.length === 0;
}

function completeCommand(c: CommandInfo): void {
  input.value = `/${c.name}`;
  input.focus();
  selected = 0;
  renderCommands();
}

/** Handles a key while the list is open; true when it used it. */
function commandKey(e: KeyboardEvent): boolean {
  if (commandList.hidden || suggested.length === 0) return false;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    selected = (selected + (e.key === "ArrowDown" ? 1 : suggested.length - 1)) % suggested.length;
    renderCommands();
    return true;
  }
  if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && !e.isComposing)) {
    completeCommand(suggested[selected]);
    return true;
  }
  if (e.key === "Escape") {
    dismissed = true;
    renderCommands();
    return true;
  }
  return false;
}

input.addEventListener("input", () => {
  dismissed = false;
  selected = 0;
  renderCommands();
});

/** Sends the composer's prompt; while a turn runs it steers it, or with `queue` runs after it. */
function send(queue = false): void {
  const text = input.value.trim();
  if (!text && attachments.length === 0) return;
  input.value = "";
  renderCommands();
  const m: ViewMessage = attachments.length ? { type: "prompt", text, images: attachments } : { type: "prompt", text };
  post(queue && busy ? { ...m, queue: true } : m);
  attachments = [];
  renderAttachments();
}

input.addEventListener("paste", (e) => {
  const files = [...(e.clipboardData?.items ?? [])]
    .filter((i) => i.kind === "file" && i.type.startsWith("image/"))
    .map((i) => i.getAsFile())
    .filter((f): f is File => f !== null);
  if (files.length === 0) return; // text: the textarea pastes it
  e.preventDefault();
  for (const f of files) void attach(f);
});

input.addEventListener("keydown", (e) => {
  if (commandKey(e)) {
    e.preventDefault();
  } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(e.altKey);
  } else if (e.key === "Escape" && busy) {
    post({ type: "cancel" });
  }
});
sendBtn.addEventListener("click", () => send());
queueBtn.addEventListener("click", () => send(true));
$("btn-undo").addEventListener("click", () => post({ type: "undo" }));
forkBtn.addEventListener("click", () => post({ type: "fork" }));
cancelBtn.addEventListener("click", () => post({ type: "cancel" }));
$("btn-new").addEventListener("click", () => post({ type: "newSession" }));
$("btn-history").addEventListener("click", () => post({ type: "listSessions" }));
$("btn-close-sessions").addEventListener("click", () => (sessionsPanel.hidden = true));
$("error-close").addEventListener("click", () => (errorBox.hidden = true));
errorAction.addEventListener("click", () => {
  const command = errorAction.dataset.command;
  if (command) post({ type: "command", command });
});
modelSelect.addEventListener("change", () => pickerChanged(modelSelect));
effortSelect.addEventListener("change", () => pickerChanged(effortSelect));
modeSelect.addEventListener("change", () => {
  const want = modeSelect.value;
  // Show the confirmed mode until the agent answers (a "modes" message).
  modeSelect.value = modeSelect.dataset.current ?? want;
  post({ type: "setMode", modeId: want });
});
transcript.addEventListener("click", (e) => {
  const a = (e.target as HTMLElement).closest("a");
  if (!a || a.classList.contains("file-link")) return;
  e.preventDefault();
  const href = a.getAttribute("href");
  if (href) post({ type: "openLink", href });
});

// ---- messages from the extension ------------------------------------------

function onUpdate(u: AcpUpdate): void {
  switch (u.sessionUpdate) {
    case "agent_message_chunk":
      addText("agent", u);
      break;
    case "agent_thought_chunk":
      addText("thought", u);
      break;
    case "user_message_chunk":
      addText("user", u);
      break;
    case "tool_call":
      toolCall(u, true);
      break;
    case "tool_call_update":
      toolCall(u, false);
      break;
    case "plan":
      renderPlan(u);
      break;
    case "current_mode_update":
      if (typeof u.currentModeId === "string") {
        modeSelect.value = u.currentModeId;
        modeSelect.dataset.current = u.currentModeId;
      }
      break;
    case "session_info_update":
      if (typeof u.title === "string") sessionTitle.textContent = u.title;
      break;
    case "usage_update":
      setUsage(u);
      break;
  }
}

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const m = event.data;
  if (!m || typeof m !== "object" || typeof (m as { type?: unknown }).type !== "string") return;
  switch (m.type) {
    case "reset":
      resetTranscript();
      setBusy(false);
      sessionTitle.textContent = m.title || (m.sessionId ? `Session ${m.sessionId.slice(0, 12)}…` : "No session");
      sessionTitle.title = m.sessionId ?? "";
      document.body.dataset.session = m.sessionId ?? "";
      turnState.textContent = m.loading ? "Loading history…" : "";
      contextChip.hidden = true;
      contextChip.textContent = "";
      break;
    case "config":
      setConfig(m.options);
      break;
    case "modes":
      setModes(m.modes, m.current);
      break;
    case "commands":
      commands = m.commands.filter((c) => typeof c?.name === "string" && c.name !== "");
      renderCommands();
      break;
    case "update":
      onUpdate(m.update);
      break;
    case "userPrompt":
      endBlock();
      addText("user", { sessionUpdate: "user_message_chunk", content: { type: "text", text: m.text } });
      for (const im of m.images ?? []) addImage("user", im);
      endBlock();
      break;
    case "turnStarted":
      errorBox.hidden = true;
      turnPrompt = [...transcript.querySelectorAll<HTMLElement>(".message.user")].pop() ?? null;
      setBusy(true);
      break;
    case "turnEnded":
      flushRenders();
      setBusy(false);
      endBlock();
      turnPrompt = null;
      if (m.stopReason && m.stopReason !== "end_turn") {
        append(h("div", { class: "turn-end muted", text: m.stopReason === "cancelled" ? "Cancelled." : `Stopped: ${m.stopReason.replace(/_/g, " ")}` }));
      }
      break;
    case "permission":
      showPermission(m);
      break;
    case "permissionResolved":
      resolvePermission(m.requestId, m.outcome);
      break;
    case "sessions":
      showSessions(m.sessions, m.current);
      break;
    case "connection":
      connection.dataset.state = m.state;
      if (m.state !== "connected") {
        connection.textContent = m.state === "connecting" ? "connecting…" : "disconnected";
        connection.classList.toggle("warning", m.state === "disconnected");
      }
      connection.title = m.detail ?? "";
      break;
    case "status":
      connection.textContent = m.lastTurn ? `${m.label} · ${m.lastTurn}` : m.label;
      connection.classList.toggle("warning", m.warning);
      connection.title = m.tooltip;
      break;
    case "error":
      flushRenders();
      showError(m.message, m.action);
      break;
    case "clearError":
      errorBox.hidden = true;
      break;
    default:
      onCheckpointMessage(m);
  }
});

/** Ends the text block for a line that interrupts it: a streaming answer's caret moves to the next block. */
function interrupt(): void {
  flushRenders();
  if (current?.kind === "agent") current.el.classList.remove("streaming");
  endBlock();
}

/** Steering, queueing, undo, rewind and fork: the messages of the turns' checkpoints. */
function onCheckpointMessage(m: HostMessage): void {
  switch (m.type) {
    case "capabilities":
      canSteer = m.steering;
      forkBtn.hidden = !m.fork;
      document.body.classList.toggle("fork-from-turn", m.fork && m.forkFromTurn);
      setBusy(busy);
      break;
    case "turnNumber":
      if (turnPrompt) markTurn(turnPrompt, m.turn, false, turnActions);
      break;
    case "queued":
      interrupt();
      append(h("div", { class: "queued muted", text: `Queued: ${visibleLine(m.text)} — runs after this turn${m.waiting > 1 ? ` (${m.waiting} waiting)` : ""}` }));
      break;
    case "steered":
      interrupt();
      if (m.outcome === "failed") {
        append(h("div", { class: "steer-failed muted", text: `Not delivered to the running turn: ${visibleLine(m.text)} — Alt+Enter queues it.` }));
        break;
      }
      addText("user", { sessionUpdate: "user_message_chunk", content: { type: "text", text: m.text } });
      for (const im of m.images ?? []) addImage("user", im);
      current?.el.classList.add("steer");
      current?.el.querySelector(".who")?.append(h("span", { class: "steer-label", text: m.outcome === "injected" ? " · steering" : " · new turn" }));
      endBlock();
      break;
    case "checkpoint":
      interrupt();
      append(checkpointCard(m.title, m.result));
      if (m.rewoundFrom) markRewoundFrom(transcript, m.rewoundFrom);
      break;
    case "forked":
      interrupt();
      if (m.turn) dropFrom(transcript, m.turn);
      document.body.dataset.session = m.sessionId;
      sessionTitle.textContent = `Session ${m.sessionId.slice(0, 12)}…`;
      sessionTitle.title = m.sessionId;
      append(h("div", { class: "forked muted", text: `Forked from session ${m.from.slice(0, 12)}…: what follows goes to the new session.` }));
      break;
  }
}

setBusy(false);
post({ type: "ready" });
