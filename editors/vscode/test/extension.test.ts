// The bundled extension (dist/extension.cjs), activated against a stand-in
// `vscode` module and driven through its chat view's message protocol: real
// `hearth acp` + `hearth sim` for turns, status, the daemon going away, modes,
// permissions and diffs; a missing binary.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { contextLeft, pickerOption } from "../src/config.js";
import type { HostMessage } from "../src/protocol.js";
import { PACKAGE_DIR, hearthBinary, isolatedEnv, killPid, simCall, startSim, stopDaemonOf, thoughtRuns, within, type Env, type Sim } from "./helpers.js";
import { makeVscode, makeWebviewView, Uri, type Log, type TextDocument } from "./vscode-stub.js";

const BUNDLE = path.join(PACKAGE_DIR, "dist", "extension.cjs");
const pkg = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8"));

type Posted = Log<HostMessage>;

/** A 1×1 PNG, as the chat view would paste it. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** The concatenated text of the `kind` chunks among `msgs`. */
function chunks(msgs: HostMessage[], kind = "agent_message_chunk"): string[] {
  return msgs.flatMap((m) =>
    m.type === "update" && m.update.sessionUpdate === kind ? [String((m.update.content as { text?: string }).text ?? "")] : [],
  );
}

describe("the extension, activated against a stand-in vscode API", () => {
  let bin: string;
  let sim: Sim;
  let env: Env;
  let stub: ReturnType<typeof makeVscode>;
  let ext: { activate(ctx: unknown): void; deactivate(): void };
  let context: { subscriptions: { dispose(): unknown }[]; extensionUri: Uri; extension: { packageJSON: unknown } };
  let web: ReturnType<typeof makeWebviewView>;
  let posted: Posted;
  const daemons = new Set<number>();
  const loadOriginal = (Module as unknown as { _load: (...a: unknown[]) => unknown })._load;

  /** Sends a webview message and waits for the posted message it leads to (from now on). */
  async function after_(m: unknown, match: (h: HostMessage) => boolean, what: string, ms = 20_000): Promise<HostMessage> {
    const from = posted.length;
    web.send(m);
    return posted.waitFor(match, what, ms, from);
  }

  async function daemonPid(): Promise<number> {
    const before = stub.rec.opened.length;
    await stub.vscode.commands.executeCommand("hearth.showStatus");
    const doc = await stub.rec.opened.waitFor((d) => d.uri === "hearth:/status.md", "the status document", 10_000, before);
    const pid = Number(doc.text.match(/\| pid \| (\d+) \|/)?.[1]);
    assert.ok(pid > 0, doc.text);
    daemons.add(pid);
    return pid;
  }

  before(async () => {
    assert.ok(existsSync(BUNDLE), `${BUNDLE} is missing: run \`node build.mjs\` first`);
    bin = hearthBinary();
    sim = await startSim(bin);
    env = isolatedEnv(sim);
    // The extension host's environment is the daemon's: point it at this test's sim and socket.
    for (const k of ["HEARTH_SOCKET", "HEARTH_DATA_DIR", "OPENAI_BASE_URL", "OPENAI_API_KEY"]) process.env[k] = env.env[k];
    stub = makeVscode(env.workspace);
    stub.rec.config["hearth.path"] = bin;
    (Module as unknown as { _load: (...a: unknown[]) => unknown })._load = function (request: unknown, ...rest: unknown[]) {
      if (request === "vscode") return stub.vscode;
      return loadOriginal.call(this, request, ...rest);
    };
    ext = createRequire(import.meta.url)(BUNDLE);
    context = { subscriptions: [], extensionUri: Uri.file(PACKAGE_DIR), extension: { packageJSON: pkg } };
    ext.activate(context);
  });

  after(async () => {
    for (const d of context?.subscriptions ?? []) d.dispose();
    ext?.deactivate();
    (Module as unknown as { _load: unknown })._load = loadOriginal;
    for (const pid of daemons) killPid(pid);
    if (bin && env) await stopDaemonOf(bin, env);
    await sim?.stop();
    env?.cleanup();
  });

  test("activation registers every contributed command, the chat view and the status bar item", () => {
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(contributed, [
      "hearth.ask",
      "hearth.cancel",
      "hearth.forkSession",
      "hearth.inspectSession",
      "hearth.manageProcesses",
      "hearth.manageRules",
      "hearth.newSession",
      "hearth.resumeSession",
      "hearth.showStatus",
      "hearth.undoLastTurn",
    ]);
    assert.deepEqual([...stub.rec.commands.keys()].sort(), contributed);
    assert.deepEqual([...stub.rec.views.keys()], [pkg.contributes.views.hearth[0].id]);
    assert.equal(stub.rec.statusItems.length, 1);
    assert.equal(stub.rec.statusItems[0].command, "hearth.showStatus");
    assert.match(stub.rec.statusItems[0].text, /hearth/);
  });

  test("the chat view gets a locked-down page and the transcript on ready", async () => {
    web = makeWebviewView();
    posted = web.posted as Posted;
    stub.rec.views.get("hearth.chat")!.provider.resolveWebviewView(web.view);
    const html = web.view.webview.html;
    assert.match(html, /Content-Security-Policy/);
    assert.match(html, /default-src 'none'/);
    const nonce = html.match(/script-src 'nonce-([^']+)'/)?.[1];
    assert.ok(nonce, "a script nonce");
    assert.ok(html.includes(`<script nonce="${nonce}" src="${Uri.file(path.join(PACKAGE_DIR, "dist", "webview.js")).toString()}"`));
    assert.ok(existsSync(path.join(PACKAGE_DIR, "dist", "webview.js")));
    const reset = await after_({ type: "ready" }, (m) => m.type === "reset", "reset");
    assert.equal(reset.type === "reset" && reset.sessionId, null);
  });

  test("a prompt from the view: session, streamed updates, turn end, status bar", async () => {
    const from = posted.length;
    const ended = await after_({ type: "prompt", text: "list the files" }, (m) => m.type === "turnEnded", "turnEnded");
    assert.equal(ended.type === "turnEnded" && ended.stopReason, "end_turn");
    const seq = posted.items.slice(from);
    const types = seq.map((m) => (m.type === "update" ? `update:${m.update.sessionUpdate}` : m.type));
    const at = (t: string) => types.indexOf(t);
    assert.ok(at("reset") >= 0 && at("reset") < at("userPrompt"), types.join(" "));
    assert.ok(at("userPrompt") < at("turnStarted"));
    assert.ok(at("turnStarted") < at("update:tool_call"));
    assert.ok(at("update:tool_call") < at("update:agent_message_chunk"));
    assert.ok(at("update:agent_message_chunk") < at("turnEnded"));
    const modes = seq.find((m) => m.type === "modes");
    assert.ok(modes && modes.type === "modes" && modes.modes.map((m) => m.id).includes("ask"), "the mode picker is filled");
    const text = chunks(seq).join("");
    assert.match(text, /I called list_dir 1 time/);
    const status = await stub.rec.statusTexts.waitFor((t) => /hearth: ready · \d+/.test(t), "the status bar to show ready and the turn time");
    assert.match(status, /^\$\(flame\) hearth: ready · \d+(\.\d)? m?s$/);
    assert.ok(stub.rec.executed.items.some((e) => e.id === "setContext" && e.args[0] === "hearth.busy" && e.args[1] === true));
  });

  test("a prompt with a pasted image: the view's images go to the daemon as ACP image blocks and reach the model", async () => {
    const png = PNG;
    const from = posted.length;
    const ended = await after_(
      { type: "prompt", text: "what is this", images: [{ mimeType: "image/png", data: png }] },
      (m) => m.type === "turnEnded",
      "turnEnded",
    );
    assert.equal(ended.type === "turnEnded" && ended.stopReason, "end_turn");
    const seq = posted.items.slice(from);
    const shown = seq.find((m) => m.type === "userPrompt");
    assert.deepEqual(shown, { type: "userPrompt", text: "what is this", images: [{ mimeType: "image/png", data: png }] });
    // The simulator's model says what it saw: the image reached it as input_image.
    const text = chunks(seq).join("");
    assert.ok(text.includes(`You said: what is this\n[saw 1 image: image/png 1x1 (${Buffer.from(png, "base64").length} bytes)]`), text);
  });

  test("the model's thoughts reach the view before the answer; a re-created view gets each one joined", async () => {
    const from = posted.length;
    await after_({ type: "prompt", text: "think it over" }, (m) => m.type === "turnEnded", "turnEnded");
    const seq = posted.items.slice(from);
    const types = seq.map((m) => (m.type === "update" ? `update:${m.update.sessionUpdate}` : m.type));
    const runs = thoughtRuns(seq);
    assert.ok(runs.length >= 1 && runs.every((t) => t.trim()), `thoughts with text were posted: ${types.join(" ")}`);
    assert.ok(types.indexOf("update:agent_thought_chunk") < types.indexOf("update:agent_message_chunk"), types.join(" "));

    // The side bar is closed and opened again: the transcript comes from the extension's history.
    const again = makeWebviewView();
    stub.rec.views.get("hearth.chat")!.provider.resolveWebviewView(again.view);
    web = again;
    posted = again.posted as Posted;
    await after_({ type: "ready" }, (m) => m.type === "connection", "the replayed transcript");
    const replayed = posted.items;
    const prompt = replayed.findLastIndex((m) => m.type === "userPrompt" && m.text === "think it over");
    assert.ok(prompt >= 0, "the prompt is in the replay");
    const turn = replayed.slice(prompt);
    assert.deepEqual(chunks(turn, "agent_thought_chunk"), runs, "one message per thought, with all its text");
    assert.deepEqual(thoughtRuns(turn), runs);
    assert.equal(chunks(turn).join(""), chunks(seq).join(""), "the answer too");
  });

  test("Show Status and Inspect Session open the daemon's documents", async () => {
    const pid = await daemonPid();
    const statusDoc = stub.rec.opened.items.findLast((d) => d.uri === "hearth:/status.md")!;
    assert.match(statusDoc.text, /^# hearth status/);
    assert.ok(statusDoc.text.includes(`| socket | \`${env.socket}\` |`));
    assert.match(statusDoc.text, /\(this window\) \| ready \| ws \|/);
    assert.ok(pid > 0);
    assert.ok(stub.rec.executed.items.some((e) => e.id === "markdown.showPreview"));

    const before = stub.rec.opened.length;
    await stub.vscode.commands.executeCommand("hearth.inspectSession");
    const doc = await stub.rec.opened.waitFor((d) => d.uri.startsWith("hearth:/inspect/"), "the inspect document", 10_000, before);
    const parsed = JSON.parse(doc.text);
    assert.ok(parsed.session, doc.text.slice(0, 200));
    assert.ok(doc.text.includes("list the files"));
  });

  test("Open diff shows both sides in VS Code's diff editor", async () => {
    const from = stub.rec.executed.length;
    web.send({ type: "openDiff", path: path.join(env.workspace, "a.txt"), oldText: "hello\n", newText: "hello, world\n" });
    const call = await stub.rec.executed.waitFor((e) => e.id === "vscode.diff", "vscode.diff", 5_000, from);
    const [left, right, title] = call.args as [Uri, Uri, string];
    assert.equal(title, "a.txt (hearth edit)");
    const provider = stub.rec.contentProviders.get(left.scheme)!;
    assert.equal(await provider.provideTextDocumentContent(left), "hello\n");
    assert.equal(await provider.provideTextDocumentContent(right), "hello, world\n");
    assert.match(left.path, /a\.txt$/);
  });

  test("the daemon going away mid-turn: an error in the view, then the next prompt reconnects", async () => {
    const pid = await daemonPid();
    const from = posted.length;
    // 150 model round trips with a tool each: a turn that lasts until the kill.
    web.send({ type: "prompt", text: "sim:calls=150 sim:tool=list_dir" });
    await posted.waitFor((m) => m.type === "update" && m.update.sessionUpdate === "tool_call", "the first tool call", 20_000, from);
    killPid(pid, "SIGKILL");
    const err = await posted.waitFor((m) => m.type === "error", "the error message", 20_000, from);
    assert.ok(err.type === "error");
    assert.match(err.message, /The hearth daemon went away/);
    assert.match(err.message, /restarted on your next action/);
    assert.deepEqual(err.action, { label: "Show log", command: "showOutput" });
    const ended = posted.items.slice(from).find((m) => m.type === "turnEnded");
    assert.deepEqual(ended, { type: "turnEnded", stopReason: "error" });
    assert.ok(posted.items.slice(from).some((m) => m.type === "connection" && m.state === "disconnected"));
    await stub.rec.statusTexts.waitFor((t) => t.includes("reconnecting"), "the status bar to say reconnecting");

    const again = posted.length;
    const ok = await after_({ type: "prompt", text: "are you back?" }, (m) => m.type === "turnEnded", "the next turn", 30_000);
    assert.deepEqual(ok, { type: "turnEnded", stopReason: "end_turn" });
    const text = chunks(posted.items.slice(again)).join("");
    assert.equal(text, "You said: are you back?");
    assert.ok(posted.items.slice(again).some((m) => m.type === "clearError"), "the old error is cleared");
    assert.notEqual(await daemonPid(), pid);
  });

  test("resume: session list and replayed history", async () => {
    const list = await after_({ type: "listSessions" }, (m) => m.type === "sessions", "the session list");
    assert.ok(list.type === "sessions");
    assert.ok(list.sessions.length >= 1);
    const id = list.current!;
    assert.ok(list.sessions.some((s) => s.sessionId === id));
    const from = posted.length;
    await after_({ type: "loadSession", sessionId: id }, (m) => m.type === "turnEnded", "the replay to end");
    const seq = posted.items.slice(from);
    assert.equal(seq.filter((m) => m.type !== "clearError")[0].type, "reset", "the view is cleared before the replay");
    const users = chunks(seq, "user_message_chunk");
    assert.deepEqual(users, ["list the files", "what is this", "", "think it over", "sim:calls=150 sim:tool=list_dir", "are you back?"]);
    // The pasted image comes back as an image block of the user's message, after its text.
    const images = seq.flatMap((m) =>
      m.type === "update" && m.update.sessionUpdate === "user_message_chunk" && (m.update.content as { type?: string }).type === "image" ? [m.update.content] : [],
    );
    assert.deepEqual(images, [{ type: "image", mimeType: "image/png", data: PNG }]);
    // The stored thoughts are replayed too, each before the answer of its response.
    const types = seq.map((m) => (m.type === "update" ? `update:${m.update.sessionUpdate}` : m.type));
    assert.ok(thoughtRuns(seq).length >= 2 && thoughtRuns(seq).every((t) => t.trim()), `replayed thoughts: ${types.join(" ")}`);
    assert.ok(types.indexOf("update:agent_thought_chunk") < types.indexOf("update:agent_message_chunk"), types.join(" "));
  });

  test("the agent reads a document's unsaved text; its edits land in the documents, unsaved", async () => {
    // A document the user changed without saving: read_file returns its text, not the disk's.
    const bufTxt = path.join(env.workspace, "buf.txt");
    writeFileSync(bufTxt, "on disk\n");
    const doc = (await stub.vscode.workspace.openTextDocument(Uri.file(bufTxt))) as unknown as TextDocument;
    doc.edit(0, "on disk".length, "unsaved");
    assert.equal(doc.isDirty, true);
    let from = posted.length;
    await after_({ type: "prompt", text: simCall("read_file", { path: "buf.txt" }) }, (m) => m.type === "turnEnded", "the read turn");
    const seen = JSON.stringify(posted.items.slice(from));
    assert.ok(seen.includes("1\\tunsaved"), `the tool output shows the unsaved text: ${seen.slice(0, 2000)}`);
    assert.ok(!seen.includes("1\\ton disk"), "not the disk's");

    // An edit of that document (ask mode: the user allows it) changes it, unsaved.
    from = posted.length;
    const perm = await after_({ type: "prompt", text: simCall("edit_file", { path: "buf.txt", old_string: "unsaved", new_string: "edited" }) }, (m) => m.type === "permission", "the edit's permission request");
    assert.ok(perm.type === "permission");
    web.send({ type: "permission", requestId: perm.requestId, optionId: "allow_once" });
    assert.deepEqual(await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 20_000, from), { type: "turnEnded", stopReason: "end_turn" });
    assert.equal(doc.getText(), "edited\n", "the document holds the edit");
    assert.equal(doc.isDirty, true, "unsaved");
    assert.equal(readFileSync(bufTxt, "utf8"), "on disk\n", "the disk is untouched");
    assert.match(JSON.stringify(posted.items.slice(from)), /in the user's editor, unsaved/);

    // A file with no document: it is opened, edited, shown (without the focus), and left unsaved.
    const other = path.join(env.workspace, "other.txt");
    writeFileSync(other, "one\ntwo\n");
    assert.ok(!stub.rec.documents.some((d) => d.uri.fsPath === other));
    from = posted.length;
    const shown = stub.rec.shown.length;
    const perm2 = await after_({ type: "prompt", text: simCall("write_file", { path: "other.txt", content: "rewritten\n" }) }, (m) => m.type === "permission", "the write's permission request");
    assert.ok(perm2.type === "permission");
    web.send({ type: "permission", requestId: perm2.requestId, optionId: "allow_once" });
    await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 20_000, from);
    const otherDoc = stub.rec.documents.find((d) => d.uri.fsPath === other);
    assert.ok(otherDoc, "other.txt was opened");
    assert.equal(otherDoc.getText(), "rewritten\n");
    assert.equal(otherDoc.isDirty, true);
    assert.equal(readFileSync(other, "utf8"), "one\ntwo\n", "the disk is untouched");
    const show = await stub.rec.shown.waitFor((e) => e.path === other, "other.txt shown", 5_000, shown);
    assert.deepEqual(show.options, { preview: false, preserveFocus: true });
  });

  test("modes and permissions (real daemon): the picker switches its mode, buttons answer it, cancel withdraws", async () => {
    const aTxt = path.join(env.workspace, "a.txt");
    const original = readFileSync(aTxt, "utf8");
    const modes = await after_({ type: "newSession" }, (m) => m.type === "modes", "the modes");
    assert.ok(modes.type === "modes");
    assert.equal(modes.current, "ask");
    assert.deepEqual(modes.modes.map((m) => m.id), ["read-only", "ask", "auto-edit", "full-auto"]);
    assert.ok(modes.modes.every((m) => m.name && m.description), "the daemon's names and descriptions reach the picker");

    let from = posted.length;
    const switched = await after_({ type: "setMode", modeId: "auto-edit" }, (m) => m.type === "modes", "the mode switch");
    assert.equal(switched.type === "modes" && switched.current, "auto-edit");
    await posted.waitFor(
      (m) => m.type === "update" && m.update.sessionUpdate === "current_mode_update" && (m.update as { currentModeId?: string }).currentModeId === "auto-edit",
      "the daemon's current_mode_update",
      10_000,
      from,
    );

    // auto-edit: the edit runs without asking, and its diff reaches the view.
    from = posted.length;
    const edited = await after_({ type: "prompt", text: simCall("write_file", { path: "a.txt", content: "edited by hearth\n" }) }, (m) => m.type === "turnEnded", "the edit turn");
    assert.deepEqual(edited, { type: "turnEnded", stopReason: "end_turn" });
    assert.ok(!posted.items.slice(from).some((m) => m.type === "permission"), "auto-edit did not ask");
    // The client serves fs/write_text_file: the edit is in a.txt's document, unsaved.
    const aDoc = stub.rec.documents.find((d) => d.uri.fsPath === aTxt);
    assert.equal(aDoc?.getText(), "edited by hearth\n");
    assert.equal(aDoc?.isDirty, true);
    assert.equal(readFileSync(aTxt, "utf8"), original);
    const diff = posted.items
      .slice(from)
      .flatMap((m) => (m.type === "update" && m.update.sessionUpdate === "tool_call_update" ? ((m.update as { content?: { type: string }[] }).content ?? []) : []))
      .find((c) => c.type === "diff") as { path: string; oldText?: string | null; newText: string } | undefined;
    assert.ok(diff, "a diff in the completed tool call");
    assert.deepEqual({ ...diff }, { type: "diff", path: aTxt, oldText: original, newText: "edited by hearth\n" });
    // A new file, in a new directory, reaches VS Code too (fs/write_text_file): it creates it, then shows it.
    const fresh = path.join(env.workspace, "made", "by", "hearth.txt");
    const created = await after_({ type: "prompt", text: simCall("write_file", { path: "made/by/hearth.txt", content: "new from hearth\n" }) }, (m) => m.type === "turnEnded", "the new-file turn");
    assert.deepEqual(created, { type: "turnEnded", stopReason: "end_turn" });
    assert.deepEqual(stub.rec.created, [fresh]);
    assert.equal(readFileSync(fresh, "utf8"), "new from hearth\n");
    assert.equal(stub.rec.documents.find((d) => d.uri.fsPath === fresh)?.getText(), "new from hearth\n");
    assert.ok(stub.rec.shown.items.some((s) => s.path === fresh), "the new file is shown");
    // Open diff on the daemon's diff: both sides in VS Code's diff editor.
    const ex = stub.rec.executed.length;
    web.send({ type: "openDiff", path: diff.path, oldText: diff.oldText ?? null, newText: diff.newText });
    const call = await stub.rec.executed.waitFor((e) => e.id === "vscode.diff", "vscode.diff", 5_000, ex);
    const [left, right] = call.args as [Uri, Uri, string];
    const provider = stub.rec.contentProviders.get(left.scheme)!;
    assert.equal(await provider.provideTextDocumentContent(left), original);
    assert.equal(await provider.provideTextDocumentContent(right), "edited by hearth\n");

    // auto-edit still asks before a command: the buttons answer the daemon.
    from = posted.length;
    const ran = path.join(env.workspace, "ran-by-hearth.txt");
    const perm = await after_({ type: "prompt", text: simCall("shell", { command: "echo ran > ran-by-hearth.txt" }) }, (m) => m.type === "permission", "the permission request");
    assert.ok(perm.type === "permission");
    assert.equal(perm.title, "Run echo ran > ran-by-hearth.txt");
    assert.equal(perm.kind, "execute");
    // What the card shows: the command, from the request's tool call.
    assert.deepEqual(perm.content, [{ type: "content", content: { type: "text", text: "$ echo ran > ran-by-hearth.txt" } }]);
    assert.deepEqual(perm.rawInput, { command: "echo ran > ran-by-hearth.txt" });
    // A redirection to a file: no command prefix to keep a rule for, so no "always".
    assert.deepEqual(perm.options.map((o) => o.kind), ["allow_once", "reject_once", "reject_always"]);
    // The daemon's tool_call notification may come after its permission request.
    const callMsg = await posted.waitFor((m) => m.type === "update" && m.update.sessionUpdate === "tool_call", "the tool call", 10_000, from);
    assert.equal(callMsg.type === "update" && (callMsg.update as { toolCallId?: string }).toolCallId, perm.toolCallId);
    assert.equal(existsSync(ran), false, "nothing ran before the answer");
    web.send({ type: "permission", requestId: perm.requestId, optionId: "allow_once" });
    const resolved = await posted.waitFor((m) => m.type === "permissionResolved", "permissionResolved", 10_000, from);
    assert.deepEqual(resolved, { type: "permissionResolved", requestId: perm.requestId, outcome: "You chose: Allow once" });
    const end = await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 10_000, from);
    assert.deepEqual(end, { type: "turnEnded", stopReason: "end_turn" });
    assert.equal(readFileSync(ran, "utf8"), "ran\n");
    assert.match(chunks(posted.items.slice(from)).join(""), /I called shell 1 time/);

    // Back to ask: an edit asks; Cancel withdraws the request and the file stays as it was.
    await after_({ type: "setMode", modeId: "ask" }, (m) => m.type === "modes" && m.current === "ask", "the switch back to ask");
    from = posted.length;
    const perm2 = await after_({ type: "prompt", text: simCall("write_file", { path: "a.txt", content: "never written\n" }) }, (m) => m.type === "permission", "the edit's permission request");
    assert.ok(perm2.type === "permission");
    assert.equal(perm2.title, "Write a.txt");
    assert.equal(perm2.kind, "edit");
    // The card's diff: the file as it is and as the call would leave it.
    assert.deepEqual(perm2.content, [{ type: "diff", path: aTxt, oldText: "edited by hearth\n", newText: "never written\n" }]);
    web.send({ type: "cancel" });
    const withdrawn = await posted.waitFor((m) => m.type === "permissionResolved", "the withdrawal", 10_000, from);
    assert.ok(withdrawn.type === "permissionResolved");
    assert.equal(withdrawn.requestId, perm2.requestId);
    assert.match(withdrawn.outcome, /Withdrawn/);
    const end2 = await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 10_000, from);
    assert.deepEqual(end2, { type: "turnEnded", stopReason: "cancelled" });
    assert.equal(aDoc?.getText(), "edited by hearth\n");
    assert.equal(readFileSync(aTxt, "utf8"), original);
  });

  test("Manage Always-Allow Rules lists the rule an \"Always allow\" kept and revokes the one picked: the command asks again", async () => {
    let from = posted.length;
    const command = simCall("shell", { command: "mkdir -p kept-by-rule" });
    const perm = await after_({ type: "prompt", text: command }, (m) => m.type === "permission", "the permission request");
    assert.ok(perm.type === "permission");
    const always = perm.options.find((o) => o.kind === "allow_always");
    assert.match(always?.name ?? "", /`mkdir`/);
    web.send({ type: "permission", requestId: perm.requestId, optionId: "allow_always" });
    await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 10_000, from);

    let offered: any[] = [];
    stub.rec.quickPick = (items) => {
      offered = items;
      return items.find((i) => i.label === "mkdir");
    };
    const infos = stub.rec.infos.length;
    await stub.vscode.commands.executeCommand("hearth.manageRules");
    stub.rec.quickPick = undefined;
    assert.ok(offered.some((i) => i.label === "mkdir" && i.description === "command"), JSON.stringify(offered));
    const info = await stub.rec.infos.waitFor((m) => /revoked 1 rule/.test(m.message), "the revoke's message", 10_000, infos);
    assert.match(info.message, /mkdir asks again/);

    from = posted.length;
    const again = await after_({ type: "prompt", text: command }, (m) => m.type === "permission", "the question, asked again");
    assert.ok(again.type === "permission");
    web.send({ type: "permission", requestId: again.requestId, optionId: "reject_once" });
    await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 10_000, from);
  });

  test("Running Processes… lists the process exec_command left running and ends the one picked, and what it started", async () => {
    /** Live processes whose command line holds `sleep 3019` (the shell's, the sandbox's, the sleep's). */
    const sleepers = () =>
      readdirSync("/proc").filter((pid) => {
        if (!/^\d+$/.test(pid)) return false;
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          return /sleep[\0 ]3019/.test(cmdline) && !/^\d+ \(.*\) Z/.test(stat);
        } catch {
          return false; // gone meanwhile
        }
      });
    const steps = JSON.stringify([["exec_command", { cmd: "sleep 3019", yield_time_ms: 300 }]]).replaceAll(" ", "\\u0020");
    const from = posted.length;
    web.send({ type: "prompt", text: `p sim:steps=${steps}` });
    const first = await posted.waitFor((m) => m.type === "permission" || m.type === "turnEnded", "the command's question or the turn's end", 20_000, from);
    if (first.type === "permission") web.send({ type: "permission", requestId: first.requestId, optionId: "allow_once" });
    await posted.waitFor((m) => m.type === "turnEnded", "turnEnded", 20_000, from);
    assert.ok(sleepers().length > 0, "sleep 3019 runs after the turn");

    let offered: any[] = [];
    stub.rec.quickPick = (items) => {
      offered = items;
      return items.find((i) => i.label === "sleep 3019");
    };
    const infos = stub.rec.infos.length;
    await stub.vscode.commands.executeCommand("hearth.manageProcesses");
    stub.rec.quickPick = undefined;
    const picked = offered.find((i) => i.label === "sleep 3019");
    assert.ok(picked, JSON.stringify(offered));
    assert.match(picked.description, /^\d+ · running$/);
    assert.match(picked.detail, /^running · started \d+s ago$/);
    const info = await stub.rec.infos.waitFor((m) => /ended process/.test(m.message), "the kill's message", 10_000, infos);
    assert.equal(info.message, `hearth: ended process ${picked.process.processId}: sleep 3019`);
    assert.deepEqual(sleepers(), [], "sleep 3019 still runs");

    offered = [];
    stub.rec.quickPick = (items) => {
      offered = items;
      return undefined;
    };
    const infos2 = stub.rec.infos.length;
    await stub.vscode.commands.executeCommand("hearth.manageProcesses");
    stub.rec.quickPick = undefined;
    assert.ok(!offered.some((i) => i.label === "sleep 3019"), JSON.stringify(offered));
    if (offered.length === 0) {
      const none = await stub.rec.infos.waitFor((m) => /no processes/.test(m.message), "the empty list's message", 10_000, infos2);
      assert.match(none.message, /exec_command/);
    }
  });

  test("/compact: the offered commands reach the view; the prompt compacts the session, which answers after", async () => {
    let from = posted.length;
    await after_({ type: "newSession" }, (m) => m.type === "modes", "the new session");
    // The daemon's available_commands_update, right after session/new's answer: the view's suggestions before any prompt.
    const offered = await posted.waitFor((m) => m.type === "commands", "the commands after session/new", 10_000, from);
    assert.ok(offered.type === "commands");
    await after_({ type: "prompt", text: "before compacting" }, (m) => m.type === "turnEnded", "the first turn");
    const compact = offered.commands.find((c) => c.name === "compact");
    assert.ok(compact && compact.description.length > 0, JSON.stringify(offered.commands));

    from = posted.length;
    const ended = await after_({ type: "prompt", text: "/compact" }, (m) => m.type === "turnEnded", "the /compact turn", 30_000);
    assert.deepEqual(ended, { type: "turnEnded", stopReason: "end_turn" });
    const notice = chunks(posted.items.slice(from)).join("");
    assert.match(notice, /hearth: compacted this session \(asked by the user\)/, notice);
    assert.doesNotMatch(notice, /You said: \/compact/, "the model was not prompted with /compact");

    from = posted.length;
    await after_({ type: "prompt", text: "after compacting" }, (m) => m.type === "turnEnded", "the turn after compacting");
    assert.equal(chunks(posted.items.slice(from)).join(""), "You said: after compacting");

    // A re-created view is given the commands with the transcript.
    const again = makeWebviewView();
    stub.rec.views.get("hearth.chat")!.provider.resolveWebviewView(again.view);
    web = again;
    posted = again.posted as Posted;
    const replayed = await after_({ type: "ready" }, (m) => m.type === "commands", "the commands on ready");
    assert.deepEqual(replayed, offered);
  });

  test("model and effort pickers, context left and a command's output while it runs (real daemon)", async () => {
    let from = posted.length;
    await after_({ type: "newSession" }, (m) => m.type === "modes", "the new session");
    const first = await posted.waitFor((m) => m.type === "config", "the session's config options", 10_000, from);
    assert.ok(first.type === "config");
    const model = pickerOption(first.options, "model");
    const effort = pickerOption(first.options, "thought_level");
    assert.equal(model?.current, "gpt-5.3-codex");
    assert.ok(model?.values.some((v) => v.value === "o3"), JSON.stringify(model));
    assert.deepEqual(effort?.values.map((v) => v.value), ["low", "medium", "high", "xhigh"]);

    // The model picker: session/set_config_option, then the daemon's whole set (o3's efforts).
    const picked = await after_({ type: "setConfigOption", configId: "model", value: "o3" }, (m) => m.type === "config" && pickerOption(m.options, "model")?.current === "o3", "the model choice");
    assert.ok(picked.type === "config");
    assert.deepEqual(pickerOption(picked.options, "thought_level")?.values.map((v) => v.value), ["low", "medium", "high"]);
    await after_({ type: "setConfigOption", configId: "thought_level", value: "high" }, (m) => m.type === "config" && pickerOption(m.options, "thought_level")?.current === "high", "the effort choice");

    // Context left after each response: usage_update with o3's window.
    from = posted.length;
    await after_({ type: "prompt", text: "how full are you?" }, (m) => m.type === "turnEnded", "the turn");
    // The turn's response is the last told (the effort's choice told the warm-up's usage too, just before).
    const usage = posted.items.slice(from).flatMap((m) => (m.type === "update" && m.update.sessionUpdate === "usage_update" ? [m.update as { used?: number; size?: number }] : []));
    const last = usage.at(-1);
    assert.ok(last && last.size === 200_000, JSON.stringify(usage));
    assert.ok(usage.length < 2 || last.used! > usage[0].used!, `the answer grew the context: ${JSON.stringify(usage)}`);
    // A short session (hearth's guidance, the tools, the environment note, two prompts) uses a few
    // thousand of o3's 200,000 tokens.
    assert.match(contextLeft(last.used, last.size), /^9\d% context left$/);
    const before = stub.rec.opened.length;
    await stub.vscode.commands.executeCommand("hearth.inspectSession");
    const doc = await stub.rec.opened.waitFor((d) => d.uri.startsWith("hearth:/inspect/"), "the inspect document", 10_000, before);
    assert.equal(JSON.parse(doc.text).session.model, "o3", "the session's requests name the chosen model");

    // A command's output while it runs: it waits on a FIFO until the test writes it.
    await after_({ type: "setMode", modeId: "full-auto" }, (m) => m.type === "modes" && m.current === "full-auto", "full-auto");
    const fifo = path.join(env.workspace, "go-on");
    execFileSync("mkfifo", [fifo]);
    try {
      from = posted.length;
      web.send({ type: "prompt", text: `run ${simCall("shell", { command: "echo first; read x < go-on; echo second" })}` });
      const live = await posted.waitFor(
        (m) => m.type === "update" && m.update.sessionUpdate === "tool_call_update" && JSON.stringify(m.update.content ?? "").includes("first\\n"),
        "the command's first line while it runs",
        20_000,
        from,
      );
      assert.ok(live.type === "update");
      assert.ok(!posted.items.slice(from).some((m) => m.type === "update" && m.update.sessionUpdate === "tool_call_update" && m.update.status === "completed"), "not completed yet");
      writeFileSync(fifo, "\n");
      await posted.waitFor((m) => m.type === "turnEnded", "the turn's end", 20_000, from);
      const done = posted.items.slice(from).findLast((m) => m.type === "update" && m.update.sessionUpdate === "tool_call_update");
      assert.ok(done?.type === "update" && done.update.status === "completed");
      assert.match(JSON.stringify(done.update.content), /first\\nsecond\\n/);
    } finally {
      rmSync(fifo, { force: true });
    }
  });

  test("steering (real daemon): Enter during a turn steers it, shown where it landed; Alt+Enter queues a prompt that runs next", async () => {
    let from = posted.length;
    await after_({ type: "newSession" }, (m) => m.type === "modes", "the new session");
    const caps = posted.items.filter((m) => m.type === "capabilities").pop();
    assert.ok(caps && caps.type === "capabilities" && caps.steering, `initialize advertised steering: ${JSON.stringify(caps)}`);
    from = posted.length;
    web.send({ type: "prompt", text: "slow" }); // the simulator streams this answer for about 10 s
    await posted.waitFor((m) => m.type === "update" && m.update.sessionUpdate === "agent_message_chunk", "the answer streaming", 20_000, from);
    const queued = await after_({ type: "prompt", text: "after the steer", queue: true }, (m) => m.type === "queued", "the queued prompt");
    assert.deepEqual(queued, { type: "queued", text: "after the steer", waiting: 1 });
    const steered = await after_({ type: "prompt", text: "say banana" }, (m) => m.type === "steered", "the steer");
    assert.deepEqual(steered, { type: "steered", text: "say banana", outcome: "injected" });
    let ends = 0;
    await posted.waitFor((m) => m.type === "turnEnded" && ++ends === 2, "both turns", 30_000, from);
    const seq = posted.items.slice(from);
    const kinds = seq.map((m) => (m.type === "update" ? m.update.sessionUpdate : m.type)).filter((k) => !["usage_update", "available_commands_update", "status", "session_info_update"].includes(k));
    const firstEnd = kinds.indexOf("turnEnded");
    assert.ok(kinds.indexOf("steered") < firstEnd, kinds.join(" "));
    const prompts = seq.flatMap((m) => (m.type === "userPrompt" ? [m.text] : []));
    assert.deepEqual(prompts, ["slow", "after the steer"], "the queued prompt is shown when its turn starts");
    assert.ok(seq.findIndex((m) => m.type === "userPrompt" && m.text === "after the steer") > seq.findIndex((m) => m.type === "turnEnded"));
    const text = chunks(seq).join("");
    assert.match(text, /You said: say banana/);
    assert.match(text, /You said: after the steer/);
    assert.ok(text.indexOf("You said: say banana") < text.indexOf("You said: after the steer"), text);
  });

  test("Undo Last Turn (real daemon): asks first listing the files, puts back the turn's files, shows and says what it did", async () => {
    await after_({ type: "newSession" }, (m) => m.type === "modes", "the new session");
    await after_({ type: "setMode", modeId: "full-auto" }, (m) => m.type === "modes", "full-auto");
    const made = path.join(env.workspace, "undo-made.txt");
    await after_({ type: "prompt", text: simCall("write_file", { path: "undo-made.txt", content: "made\n" }) }, (m) => m.type === "turnEnded", "the write turn");
    assert.ok(existsSync(made), "the turn created undo-made.txt");
    // Dismissed: nothing is undone.
    let asked = stub.rec.warnings.length;
    stub.rec.confirm = () => undefined;
    await stub.vscode.commands.executeCommand("hearth.undoLastTurn");
    const q = await stub.rec.warnings.waitFor((w) => w.modal, "the confirmation", 5_000, asked);
    assert.equal(q.message, "Undo the file changes of hearth's last turn?");
    assert.deepEqual(q.items, ["Undo"]);
    assert.match(q.detail ?? "", /\n\nTo remove \(created by that turn\):\n   undo-made\.txt(\n|$)/, "the files, from a dry run");
    assert.ok(existsSync(made), "dismissed: the file stays");
    // Confirmed from the view's button.
    asked = stub.rec.warnings.length;
    stub.rec.confirm = () => "Undo";
    const infos = stub.rec.infos.length;
    const done = await after_({ type: "undo" }, (m) => m.type === "checkpoint", "the undo's result");
    stub.rec.confirm = undefined;
    assert.ok(done.type === "checkpoint");
    assert.equal(done.title, "Undo");
    assert.deepEqual(done.result.removed, ["undo-made.txt"]);
    assert.equal(existsSync(made), false, "undo removed the file the turn created");
    const said = await stub.rec.infos.waitFor((i) => i.message.startsWith("hearth: Undo"), "the notification", 5_000, infos);
    assert.equal(said.message, "hearth: Undo: 1 removed.");
  });

  test("Restore to here and Fork Session (real daemon): numbered prompts, a confirmation listing the turns and their files, rewound marks, a fork that keeps the transcript", async () => {
    const parent = await after_({ type: "newSession" }, (m) => m.type === "reset" && m.sessionId !== null, "the new session");
    await after_({ type: "setMode", modeId: "full-auto" }, (m) => m.type === "modes", "full-auto");
    const file = (name: string) => path.join(env.workspace, name);
    writeFileSync(file("rw-a.txt"), "one\n");
    const steps = (...calls: [string, Record<string, unknown>][]) => `sim:steps=${JSON.stringify(calls).replaceAll(" ", "\\u0020")}`;
    let from = posted.length;
    await after_(
      { type: "prompt", text: `one ${steps(["write_file", { path: "rw-a.txt", content: "two\n" }], ["write_file", { path: "rw-new.txt", content: "new\n" }])}` },
      (m) => m.type === "turnEnded",
      "turn 1",
    );
    await after_({ type: "prompt", text: `two ${steps(["write_file", { path: "rw-b.txt", content: "by hearth\n" }])}` }, (m) => m.type === "turnEnded", "turn 2");
    const numbers = posted.items.slice(from).flatMap((m) => (m.type === "turnNumber" ? [m.turn] : []));
    assert.deepEqual(numbers, [1, 2], "each prompt's number reaches the view");
    const caps = posted.items.filter((m) => m.type === "capabilities").pop();
    assert.ok(caps?.type === "capabilities" && caps.fork, "fork advertised");
    assert.ok(stub.rec.executed.items.some((e) => e.id === "setContext" && e.args[0] === "hearth.canFork" && e.args[1] === true));
    // The user changes rw-b.txt, which turn 2 created, and saves it: a conflict.
    const doc = (name: string) => stub.rec.documents.find((d) => d.uri.fsPath === file(name));
    const b = doc("rw-b.txt");
    assert.ok(b, "rw-b.txt's document");
    assert.equal(b.getText(), "by hearth\n");
    b.edit(0, "by hearth".length, "the user's");
    writeFileSync(file("rw-b.txt"), b.getText());
    b.isDirty = false;

    let detail: string | undefined;
    stub.rec.confirm = (_m, d) => {
      detail = d;
      return "Restore";
    };
    const warnings = stub.rec.warnings.length;
    const done = await after_({ type: "rewind", turn: 1 }, (m) => m.type === "checkpoint", "the rewind's result");
    stub.rec.confirm = undefined;
    assert.match(detail ?? "", /before prompt 1/);
    assert.match(detail ?? "", /\n1\. one sim:steps=[^\n]* \(2 files changed\)\n   rw-a\.txt\n   rw-new\.txt\n2\. two sim:steps=[^\n]* \(1 file changed\)\n   rw-b\.txt\n/);
    assert.ok(done.type === "checkpoint");
    assert.equal(done.rewoundFrom, 1, "prompt 1 and the later ones are marked rewound");
    assert.match(done.result.message ?? "", /^Rewound this session to before turn 1/);
    assert.deepEqual(done.result.restored, ["rw-a.txt"]);
    assert.deepEqual(done.result.removed, ["rw-new.txt"]);
    assert.deepEqual(done.result.conflicts, ["rw-b.txt"]);
    assert.equal(done.result.conflictDiffs?.[0].path, "rw-b.txt");
    assert.match(done.result.conflictDiffs?.[0].diff ?? "", /^-by hearth$[\s\S]*^\+the user's$/m);
    assert.equal(doc("rw-a.txt")?.getText(), "one\n", "rw-a.txt put back in its document");
    assert.equal(existsSync(file("rw-new.txt")), false, "rw-new.txt removed");
    assert.equal(b.getText(), "the user's\n", "the conflict keeps the user's text");
    const warned = await stub.rec.warnings.waitFor((w) => !w.modal, "the conflict warning", 5_000, warnings);
    assert.equal(warned.message, "hearth: Restore: 1 restored, 1 removed, 1 conflict.");

    from = posted.length;
    assert.ok(parent.type === "reset");
    await stub.vscode.commands.executeCommand("hearth.forkSession");
    const forked = await posted.waitFor((m) => m.type === "forked", "the fork", 10_000, from);
    assert.ok(forked.type === "forked");
    assert.equal(forked.from, parent.sessionId);
    assert.notEqual(forked.sessionId, parent.sessionId);
    assert.ok(!posted.items.slice(from).some((m) => m.type === "reset"), "the transcript stays: it is the fork's history");
    await after_({ type: "prompt", text: "in the fork" }, (m) => m.type === "turnEnded", "a turn of the fork");
    assert.match(chunks(posted.items.slice(from)).join(""), /You said: in the fork/);

    // "Fork from here": session/fork with _meta["hearth/turn"], offered as the daemon advertises.
    assert.ok(caps.forkFromTurn, "fork from a turn advertised");
    const fromHere = await after_({ type: "fork", turn: 1 }, (m) => m.type === "forked", "the fork from prompt 1");
    assert.ok(fromHere.type === "forked");
    assert.equal(fromHere.turn, 1);
    assert.equal(fromHere.from, forked.sessionId);
    assert.ok(![parent.sessionId, forked.sessionId].includes(fromHere.sessionId), "a new session");
  });

  test("a missing binary: the view and a notification point to the README", async () => {
    stub.rec.config["hearth.path"] = path.join(path.dirname(env.socket), "not-there", "hearth");
    const errorsBefore = stub.rec.errors.length;
    const err = await after_({ type: "newSession" }, (m) => m.type === "error", "the error");
    assert.ok(err.type === "error");
    assert.match(err.message, /hearth binary was not found/);
    assert.match(err.message, /not-there/);
    assert.deepEqual(err.action, { label: "Open the README", command: "openReadme" });
    const note = await stub.rec.errors.waitFor(() => true, "the error notification", 5_000, errorsBefore);
    assert.deepEqual(note.items, ["Open README", "Open Settings"]);
    const opened = stub.rec.external.length;
    web.send({ type: "command", command: "openReadme" });
    assert.equal(await within(stub.rec.external.waitFor(() => true, "openExternal", 5_000, opened), 6_000, "openExternal"), "https://github.com/hearthd/hearth#readme");
  });
});
