package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// The ACP config options a session has (session/new, load and resume
// answer with them; session/set_config_option sets one). The ids are a
// public contract.
const (
	optionMode   = "mode"          // the session mode; session/set_mode sets it too
	optionModel  = "model"         // the model its requests name
	optionEffort = "thought_level" // the model's reasoning effort; only for a model that reasons
)

// effortNames are what editors show for each reasoning effort.
var effortNames = map[string]string{"none": "None", "minimal": "Minimal", "low": "Low", "medium": "Medium",
	"high": "High", "xhigh": "Extra high"}

// settings says and changes what a session's editors may set: its mode,
// model and reasoning effort, offered as ACP session modes and config
// options. One per daemon, made by New and used until it closes; it keeps
// no session's state (a session's choices are in its openSession, its
// Conversation and the store), only what the options are built from.
type settings struct {
	db       *store.DB
	network  func() string // Config.ShellNetwork in effect: the modes' descriptions depend on it
	modelSet func() bool   // HEARTH_MODEL names the configured model (else it is hearth's default)
}

// configOptions are the config options of a session in mode whose requests
// are built from cfg (its model and effort chosen or configured);
// configured is the workspace's model (HEARTH_MODEL, or hearth's default).
func (st *settings) configOptions(mode string, cfg session.Config, configured string) []acp.SessionConfigOption {
	if !validMode(mode) {
		mode = ModeAsk
	}
	var modeValues acp.SessionConfigSelectOptionsUngrouped
	for _, m := range sessionModes(st.network()) {
		modeValues = append(modeValues, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	opts := []acp.SessionConfigOption{
		selectOption(optionMode, "Mode", acp.SessionConfigOptionCategoryMode, "What the agent may do without asking.", mode, modeValues),
		selectOption(optionModel, "Model", acp.SessionConfigOptionCategoryModel, "The model that answers; changing it makes the next request carry the whole conversation.",
			cfg.Model, modelValues(cfg.Model, configured, st.modelSet())),
	}
	if levels := effortLevels(cfg); len(levels) > 0 {
		var values acp.SessionConfigSelectOptionsUngrouped
		for _, e := range levels {
			values = append(values, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(e), Name: effortNames[e]})
		}
		opts = append(opts, selectOption(optionEffort, "Reasoning effort", acp.SessionConfigOptionCategoryThoughtLevel,
			"How long the model thinks before it answers.", cfg.ReasoningEffort, values))
	}
	return opts
}

func selectOption(id, name string, cat acp.SessionConfigOptionCategory, desc, current string, values acp.SessionConfigSelectOptionsUngrouped) acp.SessionConfigOption {
	return acp.SessionConfigOption{Select: &acp.SessionConfigOptionSelect{Id: acp.SessionConfigId(id), Name: name,
		Category: &cat, Description: &desc, Type: "select", CurrentValue: acp.SessionConfigValueId(current),
		Options: acp.SessionConfigSelectOptions{Ungrouped: &values}}}
}

// modelValues are the models a session may choose, each once, in an order
// that does not change with the choice: the configured one, hearth's list
// (session.Models), then the current one (a model chosen when it was the
// configured one). fromEnv says HEARTH_MODEL named the configured one (else
// it is hearth's default).
func modelValues(current, configured string, fromEnv bool) acp.SessionConfigSelectOptionsUngrouped {
	var out acp.SessionConfigSelectOptionsUngrouped
	for _, m := range append(append([]string{configured}, session.Models...), current) {
		if slices.ContainsFunc(out, func(o acp.SessionConfigSelectOption) bool { return string(o.Value) == m }) {
			continue
		}
		desc := modelDescription(session.ProfileOf(m))
		switch {
		case m == configured && fromEnv:
			desc = "Configured (HEARTH_MODEL). " + desc
		case m == configured:
			desc = "hearth's default (HEARTH_MODEL is not set). " + desc
		}
		out = append(out, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m), Name: m, Description: &desc})
	}
	return out
}

// modelDescription says what hearth knows of a model's family.
func modelDescription(p session.Profile) string {
	window := "context window not known"
	if p.ContextWindow > 0 {
		window = fmt.Sprintf("%dk-token context window", p.ContextWindow/1000)
	}
	if !p.Reasons() {
		return fmt.Sprintf("%s family, %s, no reasoning.", p.Family, window)
	}
	return fmt.Sprintf("%s family, %s, reasoning %s.", p.Family, window, strings.Join(p.ReasoningLevels, ", "))
}

// effortLevels are the efforts a session whose requests cfg builds may
// choose: its model's levels (with "none" first when that is what it has),
// or none for a model that does not reason.
func effortLevels(cfg session.Config) []string {
	levels := cfg.Profile.ReasoningLevels
	if len(levels) > 0 && cfg.ReasoningEffort == "none" {
		levels = append([]string{"none"}, levels...)
	}
	return levels
}

// sessionOptions are s's config options now.
func (st *settings) sessionOptions(s *openSession) []acp.SessionConfigOption {
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	return st.configOptions(mode, s.conv.Config(), s.ws.client.Config().Model)
}

// setConfigParams are session/set_config_option's params. Its value is a
// value id: hearth's options are all selects.
type setConfigParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

func (c *clientConn) setConfigOption(ctx context.Context, params json.RawMessage) (any, error) {
	var req setConfigParams
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	var value string
	switch {
	case req.SessionID == "":
		return nil, rpc.InvalidParams("sessionId", "is required")
	case req.ConfigID == "":
		return nil, rpc.InvalidParams("configId", "is required: one of mode, model, thought_level")
	case json.Unmarshal(req.Value, &value) != nil:
		return nil, rpc.InvalidParams("value", "%s takes a value id (a string), got %s", req.ConfigID, orNothing(req.Value))
	}
	s, err := c.d.lookup(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := c.d.settings.setOption(ctx, s, req.ConfigID, value); err != nil {
		return nil, err
	}
	c.out.flush(ctx) // the updates reach this editor before the answer
	return acp.SetSessionConfigOptionResponse{ConfigOptions: c.d.settings.sessionOptions(s)}, nil
}

func orNothing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

// setOption sets s's option id to value, which must be one of those it
// offers now (-32602 naming what is wrong otherwise). Changes of one
// session are applied and told in turn (openSession.changing).
func (st *settings) setOption(ctx context.Context, s *openSession, id, value string) error {
	s.changing.Lock()
	defer s.changing.Unlock()
	var offered []acp.SessionConfigOption
	for _, o := range st.sessionOptions(s) {
		if string(o.Select.Id) == id {
			offered = append(offered, o)
		}
	}
	if len(offered) == 0 {
		if id == optionEffort {
			return rpc.InvalidParams("configId", "thought_level: the model %s does not reason; choose one that does first", s.conv.Config().Model)
		}
		return rpc.InvalidParams("configId", "unknown option %q; one of mode, model, thought_level", id)
	}
	var values []string
	for _, v := range *offered[0].Select.Options.Ungrouped {
		values = append(values, string(v.Value))
	}
	if !slices.Contains(values, value) {
		return rpc.InvalidParams("value", "%s cannot be %q; one of %s", id, value, strings.Join(values, ", "))
	}
	switch id {
	case optionMode:
		return st.switchMode(ctx, s, value)
	case optionModel:
		ch := s.conv.Choice()
		if !session.ProfileOf(value).Takes(ch.Effort) {
			ch.Effort = "" // the new model's default
		}
		ch.Model = value
		return st.choose(ctx, s, ch)
	default:
		ch := s.conv.Choice()
		ch.Effort = value
		return st.choose(ctx, s, ch)
	}
}

// choose makes ch s's model and effort: stored, in effect from the next
// request (which is full: its settings changed), and told to every attached
// editor — the whole set of options, since a model brings its own efforts,
// and how full its window is. The caller holds s.changing.
func (st *settings) choose(ctx context.Context, s *openSession, ch session.Choice) error {
	if err := st.db.SetSessionChoice(ctx, s.id, ch.Model, ch.Effort); err != nil {
		return err
	}
	s.conv.SetChoice(ch)
	s.broadcast(acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: st.sessionOptions(s)}}, nil)
	if used, size := s.conv.ContextUsage(); used > 0 {
		updates{s}.Usage(used, size)
	}
	return nil
}

// usageAfterReply tells c how full s's context is, after the answer to
// session/load or session/resume (which names the session) is written;
// nothing when no response measured it yet.
// The figure is read when it is queued, under s.mu as broadcasts queue
// theirs: read at the call, it could be queued after a newer one a turn
// broadcast meanwhile.
func (c *clientConn) usageAfterReply(ctx context.Context, s *openSession) {
	tell := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		used, size := s.conv.ContextUsage()
		if used == 0 {
			return
		}
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(s.id),
			Update: acp.SessionUpdate{UsageUpdate: usageUpdate(s, used, size)}})
		if err == nil {
			c.out.notify(rpc.MethodSessionUpdate, b)
		}
	}
	if !rpc.AfterReply(c.stream, ctx, tell) {
		tell()
	}
}
