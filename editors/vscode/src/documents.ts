// Read-only virtual documents: both sides of an edit for VS Code's diff
// editor, and the status / inspect views.
import * as path from "node:path";
import * as vscode from "vscode";

import type { DiffOpener } from "./controller.js";

export const DIFF_SCHEME = "hearth-diff";
export const DOC_SCHEME = "hearth";

/** Holds the texts of the edits opened in the diff editor. */
export class DiffDocuments implements vscode.TextDocumentContentProvider, DiffOpener {
  private seq = 0;
  private readonly texts = new Map<string, string>();
  private readonly order: string[] = [];

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  private put(uri: vscode.Uri, text: string): void {
    const key = uri.toString();
    this.texts.set(key, text);
    this.order.push(key);
    // Keep the last 100 sides; older diff tabs show empty when reopened.
    while (this.order.length > 100) this.texts.delete(this.order.shift()!);
  }

  async open(file: string, oldText: string | null, newText: string): Promise<void> {
    const n = ++this.seq;
    const base = path.basename(file) || "file";
    // The file name keeps its extension so the editor picks the language.
    const left = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${n}/before/${base}`, query: file });
    const right = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${n}/after/${base}`, query: file });
    this.put(left, oldText ?? "");
    this.put(right, newText);
    const title = `${base} (hearth edit${oldText === null ? ", new file" : ""})`;
    await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
  }
}

/** `hearth:/status.md` and `hearth:/inspect/<session>.json`, fetched when opened. */
export class HearthDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly render: (uri: vscode.Uri) => Promise<string>) {}

  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return this.render(uri).catch((e: unknown) => `Could not fetch ${uri.path}: ${e instanceof Error ? e.message : String(e)}\n`);
  }

  /** Fetch again for an already open document. */
  refresh(uri: vscode.Uri): void {
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
