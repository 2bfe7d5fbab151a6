// VS Code entry point: registers the chat view, the status bar item, the
// virtual documents and the commands.
import * as vscode from "vscode";

import { processLabel } from "./acp/processes.js";
import { ruleLabel } from "./acp/rules.js";
import { statusMarkdown } from "./acp/status.js";
import { CHAT_VIEW_ID, ChatViewProvider } from "./chatView.js";
import { Controller } from "./controller.js";
import { DIFF_SCHEME, DOC_SCHEME, DiffDocuments, HearthDocuments } from "./documents.js";

const STATUS_URI = vscode.Uri.from({ scheme: DOC_SCHEME, path: "/status.md" });

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Hearth");
  const diffs = new DiffDocuments();
  const version = String((context.extension.packageJSON as { version?: string }).version ?? "0.0.0");
  const controller = new Controller(output, version, diffs);
  const chat = new ChatViewProvider(context.extensionUri, controller);
  controller.attachView(chat);

  const docs = new HearthDocuments(async (uri) => {
    if (uri.path === "/status.md") {
      return statusMarkdown(await controller.fetchStatus(), controller.currentRoot ?? undefined);
    }
    const m = uri.path.match(/^\/inspect\/(.+)\.json$/);
    if (m) return JSON.stringify(await controller.fetchInspect(decodeURIComponent(m[1])), null, 2) + "\n";
    return `Unknown hearth document ${uri.path}\n`;
  });

  const item = vscode.window.createStatusBarItem("hearth.status", vscode.StatusBarAlignment.Left, 50);
  item.name = "Hearth";
  item.command = "hearth.showStatus";
  item.text = "$(flame) hearth";
  item.tooltip = "hearth: not connected yet (click for the daemon's status)";
  item.show();
  controller.onStatus((s) => {
    item.text = `$(${s.icon}) hearth: ${s.label}${s.lastTurn ? ` · ${s.lastTurn}` : ""}`;
    item.tooltip = s.tooltip;
    item.backgroundColor = s.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  });

  /** Every command reports its failure instead of rejecting. */
  const command = (id: string, fn: (...args: unknown[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        await fn(...args);
      } catch (e) {
        controller.report(id, e);
      }
    });

  context.subscriptions.push(
    output,
    controller,
    docs,
    item,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs),
    vscode.workspace.registerTextDocumentContentProvider(DOC_SCHEME, docs),

    command("hearth.ask", async (arg) => {
      let text = typeof arg === "string" ? arg : undefined;
      if (text === undefined) {
        text = await vscode.window.showInputBox({ prompt: "Ask hearth", placeHolder: "What should hearth do?", ignoreFocusOut: true });
        if (!text) return;
        const editor = vscode.window.activeTextEditor;
        if (editor && !editor.selection.isEmpty) {
          const rel = vscode.workspace.asRelativePath(editor.document.uri);
          const start = editor.selection.start.line + 1;
          const end = editor.selection.end.line + 1;
          const fence = "```";
          text += `\n\nSelection from ${rel} (lines ${start}-${end}):\n${fence}${editor.document.languageId}\n${editor.document.getText(editor.selection)}\n${fence}`;
        }
      }
      chat.reveal();
      await controller.ask(text);
    }),
    command("hearth.newSession", async () => {
      chat.reveal();
      await controller.newSession();
    }),
    command("hearth.resumeSession", async (arg) => {
      if (typeof arg === "string") return controller.resume(arg);
      const sessions = await controller.listSessions();
      if (sessions.length === 0) {
        void vscode.window.showInformationMessage("hearth: no stored session for this workspace yet.");
        return;
      }
      const pick = await vscode.window.showQuickPick(
        sessions.map((s) => ({
          label: s.title || s.sessionId,
          description: s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "",
          detail: s.cwd,
          session: s,
        })),
        { placeHolder: "Resume a hearth session" },
      );
      if (pick) await controller.resume(pick.session.sessionId, pick.session.cwd);
    }),
    command("hearth.cancel", () => controller.cancel()),
    command("hearth.undoLastTurn", () => controller.undo()),
    command("hearth.forkSession", () => controller.fork()),
    command("hearth.showStatus", async () => {
      docs.refresh(STATUS_URI);
      const doc = await vscode.workspace.openTextDocument(STATUS_URI);
      try {
        await vscode.commands.executeCommand("markdown.showPreview", doc.uri);
      } catch {
        await vscode.window.showTextDocument(doc, { preview: true });
      }
      void controller.refreshStatus();
    }),
    command("hearth.inspectSession", async (arg) => {
      let id = typeof arg === "string" ? arg : controller.currentSession;
      if (!id) {
        const sessions = await controller.listSessions();
        const pick = await vscode.window.showQuickPick(
          sessions.map((s) => ({ label: s.title || s.sessionId, description: s.updatedAt ?? "", id: s.sessionId })),
          { placeHolder: "Inspect which hearth session?" },
        );
        id = pick?.id ?? null;
      }
      if (!id) return;
      const uri = vscode.Uri.from({ scheme: DOC_SCHEME, path: `/inspect/${encodeURIComponent(id)}.json` });
      docs.refresh(uri);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(doc, "json").then(undefined, () => doc);
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
    command("hearth.manageRules", async () => {
      const { rules } = await controller.fetchRules();
      if (rules.length === 0) {
        void vscode.window.showInformationMessage('hearth: no rules yet. "Always allow" on a command or an edit keeps one.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        rules.map((r) => ({ ...ruleLabel(r), rule: r })),
        { placeHolder: "Revoke which rule? (a rule spares the question; the command still runs in the mode's sandbox)" },
      );
      if (!pick) return;
      const n = await controller.revokeRule(pick.rule.id);
      void vscode.window.showInformationMessage(`hearth: revoked ${n} rule: ${pick.label} asks again.`);
    }),
    command("hearth.manageProcesses", async () => {
      const { processes } = await controller.fetchProcesses();
      if (processes.length === 0) {
        void vscode.window.showInformationMessage("hearth: no processes. A command exec_command leaves running is listed here.");
        return;
      }
      const pick = await vscode.window.showQuickPick(
        processes.map((p) => ({ ...processLabel(p), process: p })),
        { placeHolder: "End which process? (it and everything it started; the model finds it gone)" },
      );
      if (!pick) return;
      await controller.killProcess(pick.process.processId);
      void vscode.window.showInformationMessage(`hearth: ended process ${pick.process.processId}: ${pick.label}`);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("hearth")) output.appendLine("hearth settings changed: used from the next action");
    }),
  );
  output.appendLine(`Hearth ${version} active`);
}

export function deactivate(): void {
  // The subscriptions dispose everything; the daemon keeps running for other editors.
}
