// The side bar's chat webview.
import * as vscode from "vscode";

import type { ChatSink, Controller } from "./controller.js";
import type { HostMessage, ViewMessage } from "./protocol.js";
import { renderChatHtml } from "./webview/html.js";

export const CHAT_VIEW_ID = "hearth.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, ChatSink {
  private view?: vscode.WebviewView;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: Controller,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = renderChatHtml({
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
      cspSource: view.webview.cspSource,
    });
    view.webview.onDidReceiveMessage((m: ViewMessage) => {
      this.controller.handleViewMessage(m).catch((e: unknown) => this.controller.report("chat view", e));
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  get visible(): boolean {
    return !!this.view?.visible;
  }

  post(msg: HostMessage): void {
    // A view being torn down rejects; the transcript is replayed when it comes back.
    void this.view?.webview.postMessage(msg).then(undefined, () => undefined);
  }

  reveal(): void {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`).then(undefined, () => undefined);
  }
}
