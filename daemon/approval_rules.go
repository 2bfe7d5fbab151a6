package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// authorizeCommand decides whether the command req of call may run, and
// how (decideCommand): at once, or after asking the editor that sent the
// prompt, whose "always allow" keeps a rule for the command's prefix in
// the workspace. A session's "always reject" of the tool refuses every
// command. It returns a result for the model when the command must not
// run.
func (t *sessionTools) authorizeCommand(ctx context.Context, call session.ToolCall, tool workspace.Tool, pv workspace.Preview, req CommandRequest) (CommandGrant, *session.ToolResult, bool) {
	s := t.s
	s.mu.Lock()
	mode, asker := s.mode, s.prompter
	s.mu.Unlock()
	perms, err := t.d.db.Memory().Permissions(ctx, s.id)
	if err != nil {
		return CommandGrant{}, refused("could not read the session's permissions: %v", err), false
	}
	if perms[tool.Name] == store.Reject {
		return CommandGrant{}, refused("the user rejected every %s call in this session; do not retry it", tool.Name), false
	}
	v := decideCommand(mode, req, nil)
	if v.ask && !req.Escalate {
		// Rules only spare a question: read them only for one.
		v = decideCommand(mode, req, t.rules().patterns(ctx, store.RuleCommand))
	}
	switch {
	case v.refuse != "":
		return CommandGrant{}, refused("%s", v.refuse), false
	case !v.ask:
		return v.grant, nil, true
	case !req.Escalate && perms[tool.Name] == store.Allow:
		return v.grant, nil, true // an "always" of this session, from before rules
	case asker == nil:
		return CommandGrant{}, refused("no editor is attached to approve %s", tool.Name), false
	}
	choice, res := t.ask(ctx, asker, call, tool, pv, commandOptions(v))
	if res != nil {
		return CommandGrant{}, res, false
	}
	switch choice {
	case "allow_once":
		return v.grant, nil, true
	case "allow_always":
		t.rules().keep(ctx, store.RuleCommand, v.rules) // none for an escalation: it was not offered
		return v.grant, nil, true
	case "reject_always":
		if err := t.d.db.Memory().SetPermission(ctx, s.id, tool.Name, store.Reject); err != nil {
			t.d.log.Warn("remember permission", "err", err)
		}
	}
	return CommandGrant{}, refused("the user rejected this command; it did not run. Ask what they want instead"), false
}

// commandRequest is the CommandRequest of a command tool's call, from its
// Preview: the shell's command line and escalation, run in the session's
// working directory.
func (t *sessionTools) commandRequest(pv workspace.Preview) CommandRequest {
	return CommandRequest{Command: pv.Command, Workdir: t.s.cwd, Escalate: pv.Escalation.Escalate, Justification: pv.Escalation.Justification}
}

// escalationNote is what the permission request says of an escalation,
// one text block each: the model's justification, then what allowing it
// gives.
func escalationNote(justification string) []string {
	if strings.TrimSpace(justification) == "" {
		justification = "(the model gave no reason)"
	}
	return []string{justification, "Allowing runs this one command outside the session's sandbox: with the network, and able to write outside the workspace (hearth's own files stay out of reach)."}
}

// commandOptions are the answers offered for a command: an escalation is
// allowed once or not at all; another command may also be allowed always,
// as a rule for its prefixes, when it has safe ones.
func commandOptions(v commandVerdict) []acp.PermissionOption {
	if v.grant.Escalated {
		return []acp.PermissionOption{
			{OptionId: "allow_once", Name: "Allow once, outside the sandbox", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject_once", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		}
	}
	opts := []acp.PermissionOption{permissionOptions[0]}
	if len(v.rules) > 0 {
		opts = append(opts, acp.PermissionOption{OptionId: "allow_always", Kind: acp.PermissionOptionKindAllowAlways,
			Name: "Always allow " + quoteList(v.rules) + " in this workspace"})
	}
	return append(opts, permissionOptions[2], permissionOptions[3])
}

// pathOptions are the answers offered for an edit of paths: "always"
// keeps a rule for each path (nil paths: for the tool, this session).
func pathOptions(paths []string) []acp.PermissionOption {
	if len(paths) == 0 {
		return permissionOptions
	}
	always := permissionOptions[1]
	if len(paths) <= 3 {
		always.Name = "Always allow edits to " + quoteList(paths) + " in this workspace"
	} else {
		always.Name = fmt.Sprintf("Always allow edits to these %d files in this workspace", len(paths))
	}
	return []acp.PermissionOption{permissionOptions[0], always, permissionOptions[2], permissionOptions[3]}
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = "`" + it + "`"
	}
	return strings.Join(q, ", ")
}

// rules is the session's workspace's kept rules.
func (t *sessionTools) rules() workspaceRules {
	return workspaceRules{db: t.d.db, root: t.s.ws.root.Path(), log: t.d.log}
}

// workspaceRules reads and keeps one workspace's rules for one call. A
// plain value.
type workspaceRules struct {
	db   *store.DB
	root string
	log  *slog.Logger
}

// patterns are the workspace's rules of kind; none when they cannot be
// read (then the user is asked: a rule only ever spares a question).
func (r workspaceRules) patterns(ctx context.Context, kind store.RuleKind) []string {
	ps, err := r.db.Rules().Patterns(ctx, r.root, kind)
	if err != nil {
		r.log.Warn("read the workspace's rules", "err", err)
	}
	return ps
}

// keep stores a rule of kind for each pattern.
func (r workspaceRules) keep(ctx context.Context, kind store.RuleKind, patterns []string) {
	for _, p := range patterns {
		if _, err := r.db.Rules().Keep(ctx, r.root, kind, p); err != nil {
			r.log.Warn("keep a rule", "err", err)
		}
	}
}

// pathsOf are the workspace-relative paths an edit would change, the
// patterns of its path rules; nil for a call of another kind.
func (r workspaceRules) pathsOf(tool workspace.Tool, pv workspace.Preview) []string {
	if tool.Kind != "edit" {
		return nil
	}
	var out []string
	for _, l := range pv.Locations {
		if l = path.Clean(l); l != "." && !strings.HasPrefix(l, "../") && !path.IsAbs(l) {
			out = append(out, l)
		}
	}
	if len(out) != len(pv.Locations) {
		return nil // a path outside the workspace: no rule covers it
	}
	return out
}

// pathsCovered: a path rule of the workspace covers each of paths.
func (r workspaceRules) pathsCovered(ctx context.Context, paths []string) bool {
	if len(paths) == 0 {
		return false
	}
	kept := map[string]bool{}
	for _, p := range r.patterns(ctx, store.RulePath) {
		kept[p] = true
	}
	for _, p := range paths {
		if !kept[p] {
			return false
		}
	}
	return true
}
