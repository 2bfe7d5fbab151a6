package daemon

import (
	"encoding/json"
	"slices"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// patchStyles are the ways apply_patch is offered (session.Profile.PatchStyle):
// a custom tool with its grammar, a function taking {input}, or not at all.
var patchStyles = []string{session.PatchFreeform, session.PatchFunction, ""}

// shellStyles are the shells offered (session.Profile.ShellStyle): shell,
// or exec_command and write_stdin.
var shellStyles = []string{session.ShellCommand, session.ShellExec}

// toolStyle is what a session's tool list depends on: its model's patch
// and shell styles.
type toolStyle struct{ patch, shell string }

// shellTools are the workspace tools of each shell style; a tool named in
// none is offered with every style.
var shellTools = map[string][]string{
	session.ShellCommand: {"shell"},
	session.ShellExec:    {workspace.ExecCommandTool, workspace.WriteStdinTool},
}

// offeredWith reports whether the workspace tool name is offered with the
// shell style shell.
func offeredWith(name, shell string) bool {
	for style, names := range shellTools {
		if slices.Contains(names, name) {
			return style == shell
		}
	}
	return true
}

// workspaceSpecs is the tool list of a workspace's sessions for each patch
// and shell style, built once when the workspace opens, so that every
// request of a session carries the same bytes: the workspace's tools in
// their order — apply_patch as the style says (CustomSpec for freeform,
// Spec for function, left out for "": a shell command that is an
// apply_patch invocation is still applied as one), shell or exec_command
// and write_stdin as the shell style says — then the session-level tools
// (update_plan).
func workspaceSpecs(ts *workspace.Toolset) map[toolStyle][]json.RawMessage {
	specs := make(map[toolStyle][]json.RawMessage, len(patchStyles)*len(shellStyles))
	for _, style := range patchStyles {
		for _, shell := range shellStyles {
			var list []json.RawMessage
			for _, t := range ts.Tools() {
				if !offeredWith(t.Name, shell) {
					continue
				}
				spec := t.Spec()
				if t.Grammar != "" {
					switch style {
					case session.PatchFreeform:
						spec = t.CustomSpec()
					case "":
						continue
					}
				}
				list = append(list, spec)
			}
			specs[toolStyle{style, shell}] = append(list, sessionLevelSpecs()...)
		}
	}
	return specs
}

// Specs is the session's tool list for its model's patch and shell
// styles, then its MCP tools, then what its model and mode are offered
// beyond them (toolOffer: the web search). It is rebuilt only when a style
// or the offer changes (a reload that changed the model, a mode that
// changes the web search), which makes the next request full anyway, so
// requests stay incremental.
func (t *sessionTools) Specs() []json.RawMessage {
	p := t.s.ws.client.Config().Profile
	offer := t.offer()
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if p.PatchStyle != t.s.patchStyle || p.ShellStyle != t.s.shellStyle || offer != t.s.offer {
		t.s.patchStyle, t.s.shellStyle, t.s.offer = p.PatchStyle, p.ShellStyle, offer
		t.s.specs = offer.apply(specsWith(t.s.ws.specsFor(toolStyle{p.PatchStyle, p.ShellStyle}), t.s.mcp))
	}
	return t.s.specs
}

// specsFor is the workspace's tool list for a style; a patch style this
// daemon does not know offers apply_patch as a function, and a shell style
// it does not know the shell tool, as an unknown model's profile does.
func (w *openWorkspace) specsFor(style toolStyle) []json.RawMessage {
	if specs, ok := w.specs[style]; ok {
		return specs
	}
	if !slices.Contains(patchStyles, style.patch) {
		style.patch = session.PatchFunction
	}
	if !slices.Contains(shellStyles, style.shell) {
		style.shell = session.ShellCommand
	}
	return w.specs[style]
}
