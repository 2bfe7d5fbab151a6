package daemon

import (
	"encoding/json"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// patchStyles are the ways apply_patch is offered (session.Profile.PatchStyle):
// a custom tool with its grammar, a function taking {input}, or not at all.
var patchStyles = []string{session.PatchFreeform, session.PatchFunction, ""}

// workspaceSpecs is the tool list of a workspace's sessions for each patch
// style, built once when the workspace opens, so that every request of a
// session carries the same bytes: the workspace's tools in their order —
// apply_patch as the style says (CustomSpec for freeform, Spec for function,
// left out for "": a shell command that is an apply_patch invocation is
// still applied as one) — then the session-level tools (update_plan).
func workspaceSpecs(ts *workspace.Toolset) map[string][]json.RawMessage {
	specs := make(map[string][]json.RawMessage, len(patchStyles))
	for _, style := range patchStyles {
		var list []json.RawMessage
		for _, t := range ts.Tools() {
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
		specs[style] = append(list, sessionLevelSpecs()...)
	}
	return specs
}

// Specs is the session's tool list for its model's patch style, then its
// MCP tools, then what its model and mode are offered beyond them
// (toolOffer: the web search). It is rebuilt only when the style or the
// offer changes (a reload that changed the model, a mode that changes the
// web search), which makes the next request full anyway, so requests stay
// incremental.
func (t *sessionTools) Specs() []json.RawMessage {
	style := t.s.ws.client.Config().Profile.PatchStyle
	offer := t.offer()
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if style != t.s.patchStyle || offer != t.s.offer {
		t.s.patchStyle, t.s.offer = style, offer
		t.s.specs = offer.apply(specsWith(t.s.ws.specsFor(style), t.s.mcp))
	}
	return t.s.specs
}

// specsFor is the workspace's tool list for a patch style; a style this
// daemon does not know offers apply_patch as a function, as an unknown
// model's profile does.
func (w *openWorkspace) specsFor(style string) []json.RawMessage {
	if specs, ok := w.specs[style]; ok {
		return specs
	}
	return w.specs[session.PatchFunction]
}
