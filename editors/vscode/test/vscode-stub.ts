// A stand-in for the parts of the `vscode` API the extension uses, recording
// what the extension does with it, so the bundled extension can be activated
// and driven in plain node (no VS Code download is possible here).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? "", c.path ?? "", c.query ?? "", c.fragment ?? "");
  }
  static file(p: string): Uri {
    return new Uri("file", "", path.resolve(p), "", "");
  }
  static parse(s: string): Uri {
    const u = new URL(s);
    return new Uri(u.protocol.replace(/:$/, ""), u.host, decodeURIComponent(u.pathname), u.search.replace(/^\?/, ""), u.hash.replace(/^#/, ""));
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...parts), base.query, base.fragment);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    if (this.scheme === "file") return pathToFileURL(this.path).toString();
    return `${this.scheme}:${this.authority ? "//" + this.authority : ""}${this.path}${this.query ? "?" + this.query : ""}${this.fragment ? "#" + this.fragment : ""}`;
  }
}

export class EventEmitter<T> {
  private fns = new Set<(v: T) => void>();
  event = (fn: (v: T) => void) => {
    this.fns.add(fn);
    return { dispose: () => this.fns.delete(fn) };
  };
  fire(v: T): void {
    for (const f of this.fns) f(v);
  }
  dispose(): void {
    this.fns.clear();
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  constructor(
    readonly start: Position,
    readonly end: Position,
  ) {}
}

/** A file's document: its text in memory, dirty once an edit changed it (nothing here saves it). */
export class TextDocument {
  isDirty = false;
  readonly languageId = "plaintext";
  constructor(
    readonly uri: Uri,
    private text: string,
  ) {}
  getText(): string {
    return this.text;
  }
  get lineCount(): number {
    return this.text.split("\n").length;
  }
  positionAt(offset: number): Position {
    const before = this.text.slice(0, Math.max(0, Math.min(offset, this.text.length)));
    const lines = before.split("\n");
    return new Position(lines.length - 1, lines[lines.length - 1].length);
  }
  offsetAt(p: Position): number {
    const lines = this.text.split("\n");
    let off = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) off += lines[i].length + 1;
    return Math.min(off + p.character, this.text.length);
  }
  /** The user typing in the editor (or an extension's edit): the document becomes dirty. */
  edit(start: number, end: number, text: string): void {
    this.text = this.text.slice(0, start) + text + this.text.slice(end);
    this.isDirty = true;
  }
}

export class WorkspaceEdit {
  readonly entries: { uri: Uri; range: Range; text: string }[] = [];
  readonly creates: { uri: Uri; contents?: Uint8Array; overwrite?: boolean }[] = [];
  replace(uri: Uri, range: Range, text: string): void {
    this.entries.push({ uri, range, text });
  }
  createFile(uri: Uri, options?: { contents?: Uint8Array; overwrite?: boolean }): void {
    this.creates.push({ uri, ...options });
  }
}

type Waiter = { match: (v: unknown) => boolean; resolve: (v: unknown) => void };

/** A list that can be awaited for an entry matching a predicate. */
export class Log<T> {
  readonly items: T[] = [];
  private waiters: Waiter[] = [];
  push(v: T): void {
    this.items.push(v);
    for (const w of [...this.waiters]) {
      if (w.match(v)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(v);
      }
    }
  }
  /** The first entry from index `from` on matching `match`, now or when it comes. */
  waitFor(match: (v: T) => boolean, what: string, ms = 20_000, from = 0): Promise<T> {
    const seen = this.items.slice(from).find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      const waiter: Waiter = {
        match: match as (v: unknown) => boolean,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
      };
      this.waiters.push(waiter);
    });
  }
  get length(): number {
    return this.items.length;
  }
}

export interface Recorder {
  commands: Map<string, (...args: unknown[]) => unknown>;
  executed: Log<{ id: string; args: unknown[] }>;
  views: Map<string, { provider: any; options: unknown }>;
  contentProviders: Map<string, { provideTextDocumentContent(uri: Uri): string | Promise<string> }>;
  statusItems: any[];
  statusTexts: Log<string>;
  errors: Log<{ message: string; items: string[] }>;
  infos: Log<{ message: string; items: string[] }>;
  /** Warnings, modal ones (confirmations) with their detail. */
  warnings: Log<{ message: string; detail?: string; modal: boolean; items: string[] }>;
  opened: Log<{ uri: string; text: string }>;
  /** Every file document opened, by fsPath: what the user would see in VS Code's tabs and buffers. */
  documents: TextDocument[];
  /** Each WorkspaceEdit applied: the file and its text after. */
  edits: Log<{ path: string; text: string }>;
  /** Each file a WorkspaceEdit created. */
  created: string[];
  /** Documents passed to showTextDocument, with the options. */
  shown: Log<{ path: string; options: unknown }>;
  external: Log<string>;
  config: Record<string, unknown>;
  output: Log<string>;
  /** Answers showQuickPick with one of its items; unset: the pick is dismissed. */
  quickPick?: (items: any[]) => any;
  /** Answers a modal warning (a confirmation): the item picked, or undefined (dismissed). */
  confirm?: (message: string, detail: string | undefined, items: string[]) => string | undefined;
}

/** Builds the stub module and its recorder. `workspace` is the one folder open. */
export function makeVscode(workspace: string) {
  const rec: Recorder = {
    commands: new Map(),
    executed: new Log(),
    views: new Map(),
    contentProviders: new Map(),
    statusItems: [],
    statusTexts: new Log(),
    errors: new Log(),
    infos: new Log(),
    warnings: new Log(),
    opened: new Log(),
    documents: [],
    edits: new Log(),
    created: [],
    shown: new Log(),
    external: new Log(),
    config: {},
    output: new Log(),
  };
  const disposable = () => ({ dispose() {} });
  const folder = { uri: Uri.file(workspace), name: path.basename(workspace), index: 0 };

  async function openTextDocument(uri: Uri) {
    if (uri.scheme === "file") {
      const open = rec.documents.find((d) => d.uri.fsPath === uri.fsPath);
      if (open) return open;
      const doc = new TextDocument(uri, readFileSync(uri.fsPath, "utf8")); // throws ENOENT like VS Code fails
      rec.documents.push(doc);
      return doc;
    }
    const provider = rec.contentProviders.get(uri.scheme);
    const text = provider ? await provider.provideTextDocumentContent(uri) : "";
    rec.opened.push({ uri: uri.toString(), text });
    return { uri, getText: () => text, languageId: "plaintext" };
  }

  const vscode = {
    Uri,
    EventEmitter,
    ThemeColor,
    Position,
    Range,
    WorkspaceEdit,
    StatusBarAlignment: { Left: 1, Right: 2 },
    window: {
      activeTextEditor: undefined,
      createOutputChannel: (_name: string) => ({
        appendLine: (l: string) => rec.output.push(l),
        append: (l: string) => rec.output.push(l),
        show: () => {},
        dispose: () => {},
      }),
      createStatusBarItem: () => {
        let text = "";
        const item = {
          name: "",
          command: "",
          tooltip: "",
          backgroundColor: undefined,
          get text() {
            return text;
          },
          set text(t: string) {
            text = t;
            rec.statusTexts.push(t);
          },
          show: () => {},
          dispose: () => {},
        };
        rec.statusItems.push(item);
        return item;
      },
      registerWebviewViewProvider: (id: string, provider: unknown, options: unknown) => {
        rec.views.set(id, { provider, options });
        return disposable();
      },
      showErrorMessage: (message: string, ...items: string[]) => {
        rec.errors.push({ message, items });
        return Promise.resolve(undefined);
      },
      showInformationMessage: (message: string, ...items: string[]) => {
        rec.infos.push({ message, items });
        return Promise.resolve(undefined);
      },
      showWarningMessage: (message: string, ...rest: unknown[]) => {
        const opts = typeof rest[0] === "object" && rest[0] !== null ? (rest.shift() as { modal?: boolean; detail?: string }) : {};
        const items = rest as string[];
        rec.warnings.push({ message, detail: opts.detail, modal: !!opts.modal, items });
        return Promise.resolve(opts.modal ? rec.confirm?.(message, opts.detail, items) : undefined);
      },
      showInputBox: () => Promise.resolve(undefined),
      showQuickPick: async (items: any[] | Promise<any[]>) => rec.quickPick?.(await items),
      showTextDocument: (doc: unknown, options?: unknown) => {
        if (doc instanceof TextDocument) rec.shown.push({ path: doc.uri.fsPath, options });
        return Promise.resolve(doc);
      },
      visibleTextEditors: [] as { document: unknown }[],
    },
    workspace: {
      workspaceFolders: [folder],
      getWorkspaceFolder: (uri: Uri) => (uri.fsPath.startsWith(workspace) ? folder : undefined),
      getConfiguration: (section: string) => ({
        get: <T>(key: string, def: T): T => {
          const k = `${section}.${key}`;
          return (k in rec.config ? rec.config[k] : def) as T;
        },
      }),
      onDidChangeConfiguration: () => disposable(),
      registerTextDocumentContentProvider: (scheme: string, provider: any) => {
        rec.contentProviders.set(scheme, provider);
        return disposable();
      },
      openTextDocument,
      get textDocuments() {
        return [...rec.documents];
      },
      applyEdit: async (edit: WorkspaceEdit) => {
        // A file creation fails, as VS Code's does, on an existing file
        // without overwrite; here also on a missing directory, so that the
        // extension is seen to create it.
        for (const c of edit.creates) {
          if (!c.overwrite && existsSync(c.uri.fsPath)) return false;
          if (!existsSync(path.dirname(c.uri.fsPath))) return false;
          writeFileSync(c.uri.fsPath, c.contents ?? new Uint8Array());
          rec.created.push(c.uri.fsPath);
        }
        for (const e of edit.entries) {
          const doc = rec.documents.find((d) => d.uri.fsPath === e.uri.fsPath);
          if (!doc) return false;
          doc.edit(doc.offsetAt(e.range.start), doc.offsetAt(e.range.end), e.text);
          rec.edits.push({ path: doc.uri.fsPath, text: doc.getText() });
        }
        return true;
      },
      asRelativePath: (u: Uri) => path.relative(workspace, u.fsPath),
      fs: {
        // VS Code's createDirectory makes the missing parents too.
        createDirectory: async (u: Uri) => {
          mkdirSync(u.fsPath, { recursive: true });
        },
      },
    },
    commands: {
      registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
        rec.commands.set(id, fn);
        return { dispose: () => rec.commands.delete(id) };
      },
      executeCommand: async (id: string, ...args: unknown[]) => {
        rec.executed.push({ id, args });
        const own = rec.commands.get(id);
        if (own) return own(...args);
        return undefined;
      },
    },
    languages: {
      setTextDocumentLanguage: (doc: unknown) => Promise.resolve(doc),
    },
    env: {
      openExternal: (uri: Uri) => {
        rec.external.push(uri.toString());
        return Promise.resolve(true);
      },
    },
  };
  return { vscode, rec };
}

/** A WebviewView whose posted messages land in `posted`; `send` plays the webview's side. */
export function makeWebviewView() {
  const posted = new Log<any>();
  let receive: ((m: unknown) => unknown) | undefined;
  const view = {
    visible: true,
    shown: 0,
    webview: {
      options: {} as unknown,
      html: "",
      cspSource: "vscode-webview://stub",
      asWebviewUri: (u: Uri) => u,
      postMessage: (m: unknown) => {
        posted.push(JSON.parse(JSON.stringify(m)));
        return Promise.resolve(true);
      },
      onDidReceiveMessage: (fn: (m: unknown) => unknown) => {
        receive = fn;
        return { dispose() {} };
      },
    },
    show() {
      this.shown++;
    },
    onDidDispose: () => ({ dispose() {} }),
  };
  return {
    view,
    posted,
    send(m: unknown) {
      if (!receive) throw new Error("the extension did not listen to the webview");
      receive(m);
    },
  };
}
