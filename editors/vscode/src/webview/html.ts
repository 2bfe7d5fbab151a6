// The chat webview's HTML. No `vscode` import: the UI test serves the same
// page to headless Chromium.
import { randomBytes } from "node:crypto";

export interface ChatHtmlOptions {
  /** URI of dist/webview.js as the webview may load it. */
  scriptUri: string;
  /** URI of media/chat.css. */
  styleUri: string;
  /** The webview's CSP source (webview.cspSource). */
  cspSource: string;
  nonce?: string;
}

export function newNonce(): string {
  return randomBytes(16).toString("base64url");
}

function attr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const svg = (body: string) =>
  `<svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.4" stroke-linecap="round" aria-hidden="true">${body}</svg>`;
const ICON_NEW = svg('<path d="M8 3v10M3 8h10"/>');
const ICON_HISTORY = svg('<path d="M2.5 8a5.5 5.5 0 1 0 1.6-3.9"/><path d="M2.5 2.5v2.5H5"/><path d="M8 5v3l2 1.5"/>');
const ICON_CLOSE = svg('<path d="M4 4l8 8M12 4l-8 8"/>');
const ICON_UNDO = svg('<path d="M4 6h6a3.5 3.5 0 0 1 0 7H6"/><path d="M6.5 3.5L4 6l2.5 2.5"/>');
const ICON_FORK = svg('<circle cx="5" cy="3.5" r="1.5"/><circle cx="11" cy="3.5" r="1.5"/><circle cx="8" cy="12.5" r="1.5"/><path d="M5 5v1.5a2 2 0 0 0 2 2h2a2 2 0 0 0 2-2V5M8 8.5V11"/>');

export function renderChatHtml(o: ChatHtmlOptions): string {
  const nonce = o.nonce ?? newNonce();
  const csp = [
    "default-src 'none'",
    `style-src ${o.cspSource}`,
    `font-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>Hearth</title>
</head>
<body>
<header id="toolbar">
  <div class="row">
    <span id="session-title" class="session-title" title="">No session</span>
    <span class="spacer"></span>
    <button id="btn-new" class="icon-button" title="New session" aria-label="New session">${ICON_NEW}</button>
    <button id="btn-history" class="icon-button" title="Resume a session" aria-label="Resume a session">${ICON_HISTORY}</button>
    <button id="btn-undo" class="icon-button" title="Undo last turn: put back the files it changed" aria-label="Undo last turn">${ICON_UNDO}</button>
    <button id="btn-fork" class="icon-button" title="Fork: a new session with this one's history" aria-label="Fork session" hidden>${ICON_FORK}</button>
  </div>
  <div class="row">
    <label for="mode-select" class="muted">Mode</label>
    <select id="mode-select" title="Session mode" disabled></select>
    <span class="spacer"></span>
    <span id="connection" class="chip" title="">…</span>
  </div>
  <div id="model-row" class="row" hidden>
    <label for="model-select" class="muted">Model</label>
    <select id="model-select" title="The model that answers"></select>
    <label for="effort-select" class="muted" id="effort-label">Effort</label>
    <select id="effort-select" title="How long the model thinks"></select>
    <span class="spacer"></span>
    <span id="context-left" class="chip" title="" hidden></span>
  </div>
</header>
<section id="sessions" class="sessions" hidden>
  <div class="sessions-head"><span>Resume a session</span><button id="btn-close-sessions" class="icon-button" aria-label="Close">${ICON_CLOSE}</button></div>
  <ul id="session-list"></ul>
</section>
<div id="error" class="error" role="alert" hidden>
  <span id="error-text"></span>
  <button id="error-action" class="link-button" hidden></button>
  <button id="error-close" class="icon-button" aria-label="Dismiss">${ICON_CLOSE}</button>
</div>
<main id="transcript" aria-live="polite">
  <div id="empty" class="empty">Ask hearth about this workspace. <kbd>Enter</kbd> sends, <kbd>Shift</kbd>+<kbd>Enter</kbd> adds a line. While hearth works, <kbd>Enter</kbd> steers it and <kbd>Alt</kbd>+<kbd>Enter</kbd> queues.</div>
</main>
<section id="plan" class="plan" aria-label="Plan" hidden></section>
<footer id="composer">
  <div id="attachments" class="attachments" aria-label="Attached images" hidden></div>
  <ul id="commands" class="commands" role="listbox" aria-label="Slash commands" hidden></ul>
  <textarea id="input" rows="3" placeholder="Ask hearth… (/ for commands)" aria-label="Prompt" aria-controls="commands"></textarea>
  <div class="row">
    <span id="turn-state" class="muted"></span>
    <span class="spacer"></span>
    <button id="btn-cancel" class="secondary" hidden>Cancel</button>
    <button id="btn-queue" class="secondary" title="Alt+Enter: run after this turn" hidden>Queue</button>
    <button id="btn-send">Send</button>
  </div>
</footer>
<script nonce="${attr(nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}
