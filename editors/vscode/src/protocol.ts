// The message protocol between the extension and the chat webview. Types
// only: both sides import it (the webview through its bundle).
//
// ACP payloads are passed through as they came from the daemon (the webview
// renders `session/update` itself), so a recorded ACP stream can drive the UI
// in a test exactly as the extension does.

/** The subset of ACP's SessionUpdate the webview reads; unknown kinds are ignored. */
export interface AcpUpdate {
  sessionUpdate: string;
  [key: string]: unknown;
}

export interface ModeInfo {
  id: string;
  name: string;
  description?: string | null;
}

/** A slash command the agent offers (ACP available_commands_update): the prompt `/name` runs it. */
export interface CommandInfo {
  name: string;
  description: string;
}

/**
 * A session config option the view offers as a picker (ACP's select
 * options: hearth's `model` and `thought_level`; `mode` has its own).
 */
export interface ConfigOptionInfo {
  id: string;
  name: string;
  /** ACP's category: mode, model, thought_level, … */
  category: string | null;
  description: string | null;
  current: string;
  values: { value: string; name: string; description: string | null }[];
}

export interface SessionSummary {
  sessionId: string;
  cwd: string;
  title?: string | null;
  updatedAt?: string | null;
}

export interface PermissionOptionInfo {
  optionId: string;
  name: string;
  kind: string; // allow_once | allow_always | reject_once | reject_always
}

/** An image attached to a prompt: base64 data, as ACP's image block carries it. */
export interface ImageAttachment {
  mimeType: string;
  data: string;
}

/**
 * What `_hearth/undo` or `_hearth/rewind` did (rpc.UndoResult,
 * rpc.RewindResult): the files by what happened to them, and each
 * conflict's diff (what the turn left against what is there now) when the
 * agent sends one.
 */
export interface CheckpointResult {
  message?: string;
  restored?: string[];
  removed?: string[];
  conflicts?: string[];
  failed?: string[];
  notRestorable?: string[];
  conflictDiffs?: { path: string; diff: string }[];
}

/** What the agent did with steering input (`_session/steering`'s outcome). */
export type SteerOutcome = "injected" | "startedNewTurn" | "failed";

export type ConnectionState = "connecting" | "connected" | "disconnected";

/** Extension → webview. */
export type HostMessage =
  /** Forget the transcript: a new or resumed session starts. */
  | { type: "reset"; sessionId: string | null; title?: string | null; loading?: boolean }
  /** The slash commands the agent offered last; the prompt box suggests them. */
  | { type: "commands"; commands: CommandInfo[] }
  /** The session's modes (empty when the agent reports none). */
  | { type: "modes"; modes: ModeInfo[]; current: string | null }
  /** The session's config options (empty when the agent reports none): the model and effort pickers. */
  | { type: "config"; options: ConfigOptionInfo[] }
  /** One `session/update` of the current session. */
  | { type: "update"; update: AcpUpdate }
  /** The user's prompt, as sent (the daemon does not echo it to the sender). */
  | { type: "userPrompt"; text: string; images?: ImageAttachment[] }
  | { type: "turnStarted" }
  | { type: "turnEnded"; stopReason: string }
  /** The agent's number for the running turn's prompt (its answer's `_meta["hearth/turn"]`): "Restore to here" uses it. */
  | { type: "turnNumber"; turn: number }
  /** A prompt sent while a turn runs, queued by the agent: shown as a user message when it starts. */
  | { type: "queued"; text: string; waiting: number }
  /** Steering input and where it landed: in the running answer or as a turn of its own; or not delivered. */
  | { type: "steered"; text: string; outcome: SteerOutcome; images?: ImageAttachment[] }
  /** An undo's or a rewind's result; `rewoundFrom` marks that prompt and the later ones rewound. */
  | { type: "checkpoint"; title: string; result: CheckpointResult; rewoundFrom?: number }
  /**
   * The session was forked: the transcript so far is the new session's
   * history — up to before prompt `turn` when forked from there.
   */
  | { type: "forked"; sessionId: string; from: string; turn?: number }
  /** What the agent offers beyond ACP's basics: the view shows the controls for it. */
  | { type: "capabilities"; steering: boolean; fork: boolean; forkFromTurn: boolean }
  /**
   * A `session/request_permission` waiting for an answer. `content` and
   * `rawInput` are the request's tool call's, as ACP sent them: the card
   * shows the diff or the command it asks about from them.
   */
  | {
      type: "permission";
      requestId: string;
      title: string;
      toolCallId?: string;
      kind?: string | null;
      content?: unknown[];
      rawInput?: unknown;
      options: PermissionOptionInfo[];
    }
  /** The permission request was answered or withdrawn (the turn was cancelled). */
  | { type: "permissionResolved"; requestId: string; outcome: string }
  | { type: "sessions"; sessions: SessionSummary[]; current: string | null }
  | { type: "connection"; state: ConnectionState; detail?: string }
  | { type: "status"; label: string; lastTurn: string; warning: boolean; tooltip: string }
  | { type: "error"; message: string; action?: { label: string; command: string } }
  | { type: "clearError" };

/** Webview → extension. */
export type ViewMessage =
  | { type: "ready" }
  /** The composer's text and the images pasted into it (absent when none). */
  /** While a turn runs the prompt steers it, or with `queue` runs after it. */
  | { type: "prompt"; text: string; images?: ImageAttachment[]; queue?: boolean }
  | { type: "undo" }
  /** "Restore to here": files and conversation back to before prompt `turn`. */
  | { type: "rewind"; turn: number }
  /** Fork the session; with `turn`, from before that prompt ("Fork from here"). */
  | { type: "fork"; turn?: number }
  | { type: "cancel" }
  | { type: "newSession" }
  | { type: "listSessions" }
  | { type: "loadSession"; sessionId: string }
  | { type: "setMode"; modeId: string }
  /** A picker's choice: `session/set_config_option`. */
  | { type: "setConfigOption"; configId: string; value: string }
  | { type: "permission"; requestId: string; optionId: string | null }
  | { type: "openDiff"; path: string; oldText: string | null; newText: string }
  | { type: "openFile"; path: string; line?: number | null }
  | { type: "openLink"; href: string }
  | { type: "command"; command: string };
