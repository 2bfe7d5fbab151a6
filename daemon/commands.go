package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// The session's slash commands, offered to editors with
// available_commands_update after session/new and session/load. A prompt
// that is exactly /compact, /undo or /rewind [N] runs it instead of going to the model; /init and
// /review go to the model with what they ask of it (commandPrompt).
var sessionCommands = []acp.AvailableCommand{{
	Name: "compact",
	Description: "Replace the older part of this session, in the model's view, by a summary the model writes " +
		"(the whole history stays in hearth inspect). hearth does it by itself near the context window.",
}, {
	Name: "init",
	Description: "Study this repository and write an AGENTS.md for the agents working in it: how to build and test, " +
		"the layout, the conventions. An existing AGENTS.md is improved, not replaced without saying so.",
}, {
	Name: "review",
	Description: "Review the uncommitted changes (staged, unstaged and new files): findings first, most severe " +
		"first, each with its file and line; no file is changed.",
	Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "what to focus on (optional)"}},
}, {
	Name: "undo",
	Description: "Put back the files this session's last turn changed, with its file tools or its commands; a file " +
		"changed since is left as it is and named. Again: the turn before.",
}, {
	Name: "rewind",
	Description: "Take this session back to before its Nth prompt: the files those turns changed (file tools and " +
		"commands) put back, and the model's view of the conversation too (the later turns stay in the history, shown as " +
		"rewound). Without N: the turns to choose from.",
	Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "the turn to go back to before (optional)"}},
}}

func isCompactCommand(text string) bool { return strings.TrimSpace(text) == "/compact" }

// commandPrompts are what /init and /review ask of the model: a developer
// message before the user's own words (the command as typed, which the
// editor shows and session/load replays).
var commandPrompts = map[string]string{
	"init": `The user ran /init: write an AGENTS.md for this repository — the file that agents working in it (you included, in later sessions) read before anything else.

Study the repository first: its README and docs, the build and dependency files (Makefile, package.json, go.mod, pyproject.toml, Cargo.toml and the like), the CI configuration, how the source and the tests are laid out, and a few representative files. Then write AGENTS.md at the workspace root (the environment context names it): short and specific to this project, a few hundred words of Markdown, with sections only where they help:
- how to build, run, test (the whole suite, and a single test), lint and format: the exact commands;
- the layout: what lives where, and where new code goes;
- the conventions a newcomer would get wrong: style, naming, error handling, tests, documentation, commit messages — what the project's own docs insist on;
- what to avoid: generated files, slow or destructive commands, anything the project warns about.
Write down only what you found in the repository; never invent a command. If there is an AGENTS.md at the workspace root already, do not replace it without saying so: read it, keep what is still true, and improve it with an edit, telling the user what you changed. Anything the user wrote after /init comes first. When done, say in a few lines what the file covers.`,
	"review": `The user ran /review: review the uncommitted changes in this repository. This is a review, not a fix: change no file.

Find the changes with ` + "`git status`" + ` and ` + "`git diff HEAD`" + ` (staged and unstaged together; in a repository without commits yet, ` + "`git diff --cached`" + ` and ` + "`git diff`" + `), and read every untracked file git status lists. Read the code around a change where it is needed to judge it. Look first for what is wrong: bugs and wrong logic, unhandled errors and edge cases, races, security problems, broken contracts with callers, missing or wrong tests and docs; then for what makes the change harder to keep: unclear names, duplication, dead code, a style the codebase does not use. Anything the user wrote after /review is what to focus on.

Report the findings first, the most severe first, each one short: its severity (critical, high, medium or low), ` + "`path:line`" + `, what is wrong and why it matters, and the fix you suggest. Then a few lines on what the changes do and your overall judgment. If there is nothing to review, say so. If the mode refuses commands, say so and review the files the user names instead.`,
}

// commandPrompt is what the slash command text starts with asks of the
// model, or "" when it starts with none: the command's name, then the end
// or a space (its input).
func commandPrompt(text string) string {
	name, ok := strings.CutPrefix(strings.TrimSpace(text), "/")
	if !ok {
		return ""
	}
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name = name[:i]
	}
	return commandPrompts[name]
}

// offerAfterReply offers session id's slash commands to the editors
// attached to it (c among them) once the answer to the call handled with
// ctx — session/new, session/load, session/resume: the handler's own
// context — is written: an editor learns a new session's id from that
// answer, and an update naming it before would be dropped. again offers
// them to c even if it was told before (session/load and resume: the
// editor rebuilds its view of the session).
func (c *clientConn) offerAfterReply(ctx context.Context, id string, again bool) {
	offer := func() {
		c.d.mu.Lock()
		s := c.d.sessions[id]
		c.d.mu.Unlock()
		if s == nil {
			return
		}
		if again {
			s.mu.Lock()
			delete(s.offered, c)
			s.mu.Unlock()
		}
		s.offerCommands()
	}
	if !rpc.AfterReply(c.stream, ctx, offer) {
		offer()
	}
}

// offerCommands tells each attached editor not told yet which slash
// commands s has. It is called where an editor knows the session's id for
// sure — after the answer to session/new, load or resume, and at the start
// of a prompt (an editor that prompts a session it never opened here).
func (s *openSession) offerCommands() {
	b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id),
		Update: acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: sessionCommands}}})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		if !s.offered[c] {
			if s.offered == nil {
				s.offered = map[*clientConn]bool{}
			}
			s.offered[c] = true
			c.out.notify(rpc.MethodSessionUpdate, b)
		}
	}
}

// compact is _hearth/compact: the session compacts now, as a turn of its
// own (after the running one, if any); its attached editors are told.
func (c *clientConn) compact(ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.CompactParams
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	row, err := sessionByIDOrPrefix(ctx, c.d.db, p.SessionID)
	if err != nil {
		return nil, err
	}
	s, err := c.d.lookup(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	stop, err := s.conv.Compact(ctx, updates{s})
	if err != nil {
		return nil, turnError(err)
	}
	res := rpc.CompactResult{SessionID: s.id, StopReason: string(stop)}
	if last, err := c.d.db.Branches().LastCompaction(ctx, s.id); err == nil {
		res.Compaction = &rpc.CompactionInfo{ThroughSeq: last.ThroughSeq, Reason: last.Reason, Summary: last.Summary,
			ResponseID: last.ResponseID, Created: last.Created}
	}
	return res, nil
}
