// The agent's file access through VS Code's documents (ACP fs/read_text_file,
// fs/write_text_file): an open document's text is what the agent reads,
// unsaved changes included; its writes are WorkspaceEdits, left unsaved for
// the user to review and save. A file that does not exist is created (ACP:
// the client creates a missing file), with its directories, by a
// WorkspaceEdit too: one undo removes it.
import type * as acp from "@agentclientprotocol/sdk";
import { realpathSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import * as vscode from "vscode";

import type { FileAccess } from "./acp/client.js";

/** The same file, however its path was spelt (symlinks included) when it exists. */
function canonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function absolute(p: unknown): string {
  if (typeof p !== "string" || !path.isAbsolute(p)) throw new Error(`path must be an absolute path, got ${JSON.stringify(p)}`);
  return p;
}

/** The open document of the file `abs`, if VS Code has one. */
export function openDocument(abs: string): vscode.TextDocument | undefined {
  const docs = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === "file");
  const exact = docs.find((d) => d.uri.fsPath === abs);
  if (exact) return exact;
  const want = canonical(abs);
  return docs.find((d) => canonical(d.uri.fsPath) === want);
}

/** ACP's optional `line` (1-based) and `limit` applied to `text`. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (line == null && limit == null) return text;
  const lines = text.split("\n");
  const from = Math.max(line ?? 1, 1) - 1;
  const to = limit == null ? lines.length : from + Math.max(limit, 0);
  return lines.slice(from, to).join("\n");
}

async function exists(abs: string): Promise<boolean> {
  try {
    await stat(abs);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

/**
 * Creates the missing file `abs` holding `content`: its directories first
 * (createDirectory makes the missing parents), then the file, by a
 * WorkspaceEdit. The new file is saved as written, so what is on disk is what
 * the agent wrote.
 */
async function createFile(abs: string, content: string): Promise<vscode.TextDocument> {
  const uri = vscode.Uri.file(abs);
  await vscode.workspace.fs.createDirectory(vscode.Uri.file(path.dirname(abs)));
  const edit = new vscode.WorkspaceEdit();
  edit.createFile(uri, { contents: new TextEncoder().encode(content), overwrite: false });
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code did not create ${abs}`);
  return vscode.workspace.openTextDocument(uri);
}

export class EditorFiles implements FileAccess {
  async readTextFile(params: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
    const abs = absolute(params.path);
    const doc = openDocument(abs);
    const text = doc ? doc.getText() : await readFile(abs, "utf8");
    return { content: sliceLines(text, params.line, params.limit) };
  }

  async writeTextFile(params: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
    const abs = absolute(params.path);
    if (typeof params.content !== "string") throw new Error("content must be a string");
    let doc = openDocument(abs);
    if (!doc && !(await exists(abs))) {
      doc = await createFile(abs, params.content);
    } else {
      doc ??= await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), params.content);
      if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code did not apply the edit to ${abs}`);
    }
    // A change nobody sees is easily lost: show the document, without taking the focus.
    if (!vscode.window.visibleTextEditors.some((e) => e.document === doc)) {
      try {
        await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: true });
      } catch {
        // The edit is applied either way; showing it is a courtesy.
      }
    }
    return {};
  }
}
