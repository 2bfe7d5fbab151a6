package rpc

// Methods hearth serves (client → agent) or sends (agent → client), sorted by
// name. ACP v1 methods keep their spec names; hearth's own extensions are ACP
// extension methods, prefixed with "_hearth/".
const (
	// MethodHearthCompact (_hearth/compact, call): compact a session now,
	// as /compact does. Params CompactParams, result CompactResult.
	MethodHearthCompact = "_hearth/compact"
	// MethodHearthInspect (_hearth/inspect, call): sessions, turns, items and
	// model requests for debugging. Params InspectParams, result InspectResult.
	MethodHearthInspect = "_hearth/inspect"
	// MethodHearthProbe (_hearth/probe, call): the daemon checks that its
	// model API is reachable and takes its key (a WebSocket upgrade, closed
	// at once), for `hearth doctor`. No params; result ProbeResult.
	MethodHearthProbe = "_hearth/probe"
	// MethodHearthProcessKill (_hearth/process/kill, call): end one
	// process a session's exec_command left running. Params
	// ProcessKillParams, result ProcessKillResult.
	MethodHearthProcessKill = "_hearth/process/kill"
	// MethodHearthProcesses (_hearth/processes, call): the processes a
	// session's exec_command calls left running. Params ProcessesParams,
	// result ProcessesResult.
	MethodHearthProcesses = "_hearth/processes"
	// MethodHearthRules (_hearth/rules, call): the workspaces' kept
	// "always allow" rules (command prefixes, file paths). Params
	// RulesParams (optional), result RulesResult.
	MethodHearthRules = "_hearth/rules"
	// MethodHearthRulesRevoke (_hearth/rules/revoke, call): remove one rule
	// or all. Params RevokeRulesParams, result RevokeRulesResult.
	MethodHearthRulesRevoke = "_hearth/rules/revoke"
	// MethodHearthStatus (_hearth/status, call): daemon and workspace status.
	// No params; result Status.
	MethodHearthStatus = "_hearth/status"
	// MethodHearthUndo (_hearth/undo, call): put back the files the
	// session's last turn that changed any changed, as /undo does. Params
	// UndoParams, result UndoResult.
	MethodHearthUndo = "_hearth/undo"

	// MethodAuthenticate (authenticate, call): ACP authentication: the
	// daemon reads its stored API key again (after `hearth login`) and says
	// whether it has one.
	MethodAuthenticate = "authenticate"
	// MethodFsReadTextFile (fs/read_text_file, agent → client call): a
	// file's text as the editor has it, unsaved changes included; sent only
	// to an editor that advertised clientCapabilities.fs.readTextFile.
	MethodFsReadTextFile = "fs/read_text_file"
	// MethodFsWriteTextFile (fs/write_text_file, agent → client call): put a
	// file's new text in the editor (hearth's editors leave it unsaved); sent
	// only to an editor that advertised clientCapabilities.fs.writeTextFile.
	MethodFsWriteTextFile = "fs/write_text_file"

	// MethodInitialize (initialize, call): ACP version and capability
	// negotiation; must come first.
	MethodInitialize = "initialize"
	// MethodLogout (logout, call): remove the stored API key.
	MethodLogout = "logout"

	// MethodSessionCancel (session/cancel, notification): cancel the
	// session's running prompt turn.
	MethodSessionCancel = "session/cancel"
	// MethodSessionClose (session/close, call): the editor is done with a
	// session: its turn is cancelled, and the session closes once no editor
	// is attached (the store keeps it).
	MethodSessionClose = "session/close"
	// MethodSessionDelete (session/delete, call): remove a session and
	// everything stored of it.
	MethodSessionDelete = "session/delete"
	// MethodSessionFork (session/fork, call; ACP unstable): a new session
	// with another's history, going on from it on a lane of its own.
	MethodSessionFork = "session/fork"
	// MethodSessionList (session/list, call): list stored sessions.
	MethodSessionList = "session/list"
	// MethodSessionLoad (session/load, call): reopen a session, replaying its
	// history as session/update notifications.
	MethodSessionLoad = "session/load"
	// MethodSessionNew (session/new, call): create a session for a cwd.
	MethodSessionNew = "session/new"
	// MethodSessionPrompt (session/prompt, call): run one prompt turn; long
	// running, so it is served asynchronously.
	MethodSessionPrompt = "session/prompt"
	// MethodSessionResume (session/resume, call): reattach to a session
	// without a replay of its history.
	MethodSessionResume = "session/resume"
	// MethodSessionRequestPermission (session/request_permission, agent →
	// client call): ask the user to allow a tool call, during a prompt.
	MethodSessionRequestPermission = "session/request_permission"
	// MethodSessionStatus (session/status, call; ACP unstable): whether a
	// session is open or only stored; no side effect.
	MethodSessionStatus = "session/status"
	// MethodSessionSteering (_session/steering, call): give a running turn
	// more input, as codex-acp and claude-agent-acp define it; with no turn
	// running it starts one (unless the request's
	// _meta.steering.idleBehavior is "promptRequired").
	MethodSessionSteering = "_session/steering"
	// MethodSessionSetConfigOption (session/set_config_option, call): set
	// one of a session's config options (mode, model, thought_level);
	// answers with all of them.
	MethodSessionSetConfigOption = "session/set_config_option"
	// MethodSessionSetMode (session/set_mode, call): switch the session mode
	// (kept for clients without config options; the mode option agrees).
	MethodSessionSetMode = "session/set_mode"
	// MethodSessionUpdate (session/update, agent → client notification):
	// streamed message chunks, tool calls, plans; order matters.
	MethodSessionUpdate = "session/update"
)

// MetaNotice is the _meta key (value true) of an agent_message_chunk that is
// hearth's notice about the connection (a fallback to HTTP, a retry), not the
// model's answer: editors show it in the conversation, `hearth ask` prints it
// on stderr.
const MetaNotice = "hearth/notice"

// MetaCancelled is the _meta key (value true) of a replayed
// agent_message_chunk that is what the user was shown of an answer before
// cancelling its turn: the answer stops there.
const MetaCancelled = "hearth/cancelled"
