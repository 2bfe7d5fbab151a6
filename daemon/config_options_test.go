package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
)

// option finds the config option id in opts (nil when absent).
func option(opts []acp.SessionConfigOption, id string) *acp.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	return nil
}

// values are an option's value ids.
func values(o *acp.SessionConfigOptionSelect) []string {
	var out []string
	for _, v := range *o.Options.Ungrouped {
		out = append(out, string(v.Value))
	}
	return out
}

// current is "mode/model/effort" as opts say ("-" for an absent option).
func current(opts []acp.SessionConfigOption) string {
	var parts []string
	for _, id := range []string{optionMode, optionModel, optionEffort} {
		if o := option(opts, id); o != nil {
			parts = append(parts, string(o.CurrentValue))
		} else {
			parts = append(parts, "-")
		}
	}
	return strings.Join(parts, "/")
}

// lastOptions is the last config_option_update an editor received.
func lastOptions(ups []acp.SessionUpdate) []acp.SessionConfigOption {
	var opts []acp.SessionConfigOption
	for _, u := range ups {
		if u.ConfigOptionUpdate != nil {
			opts = u.ConfigOptionUpdate.ConfigOptions
		}
	}
	return opts
}

func (e *editor) setOption(id acp.SessionId, configID, value string) []acp.SessionConfigOption {
	e.t.Helper()
	var r acp.SetSessionConfigOptionResponse
	e.must(rpc.MethodSessionSetConfigOption, map[string]any{"sessionId": id, "configId": configID, "value": value}, &r)
	return r.ConfigOptions
}

// session/new, load and resume answer with the session's config options:
// its mode, its model (the configured one and hearth's list) and the
// model's reasoning efforts.
func TestConfigOptionsInAnswers(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	var nr acp.NewSessionResponse
	ed.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &nr)
	if got := current(nr.ConfigOptions); got != "ask/sim-model/medium" {
		t.Fatalf("session/new options: %s", got)
	}
	if m := option(nr.ConfigOptions, optionModel); m == nil || !slices.Equal(values(m), append([]string{"sim-model"}, session.Models...)) ||
		*m.Category != acp.SessionConfigOptionCategoryModel || m.Type != "select" {
		t.Fatalf("model option: %+v", m)
	}
	if e := option(nr.ConfigOptions, optionEffort); *e.Category != acp.SessionConfigOptionCategoryThoughtLevel ||
		!slices.Equal(values(e), []string{"minimal", "low", "medium", "high", "xhigh"}) {
		t.Fatalf("thought_level option: %v", values(e))
	}
	if m := option(nr.ConfigOptions, optionMode); !slices.Equal(values(m), []string{ModeReadOnly, ModeAsk, ModeAutoEdit, ModeFullAuto}) {
		t.Fatalf("mode option: %v", values(m))
	}
	ed.setOption(nr.SessionId, optionModel, "o3")
	ed.setOption(nr.SessionId, optionEffort, "high")

	b := td.connect()
	b.initialize()
	var lr acp.LoadSessionResponse
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: nr.SessionId, Cwd: td.root, McpServers: []acp.McpServer{}}, &lr)
	if got := current(lr.ConfigOptions); got != "ask/o3/high" {
		t.Errorf("session/load options: %s", got)
	}
	if got := current(b.resume(nr.SessionId, td.root).ConfigOptions); got != "ask/o3/high" {
		t.Errorf("session/resume options: %s", got)
	}
}

// A model chosen in one editor: every attached editor hears the whole new
// set (the model's own efforts); the next request names it and is full;
// an effort changes reasoning.effort; a model that does not reason has no
// effort to choose and is sent none. The choice outlives the daemon.
func TestSetConfigOptionModelAndEffort(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "hello")
	b := td.connect()
	b.initialize()
	b.resume(id, td.root)

	opts := a.setOption(id, optionModel, "gpt-5.2")
	if current(opts) != "ask/gpt-5.2/medium" || !slices.Equal(values(option(opts, optionEffort)), session.ProfileOf("gpt-5.2").ReasoningLevels) {
		t.Fatalf("after choosing gpt-5.2: %s, efforts %v", current(opts), values(option(opts, optionEffort)))
	}
	for name, e := range map[string]*editor{"A": a, "B": b} {
		e.waitFor(name+"'s config_option_update", func(ups []acp.SessionUpdate) bool { return current(lastOptions(ups)) == "ask/gpt-5.2/medium" })
	}
	a.prompt(id, "again")
	recs := td.waitRequests(2)
	last := recs[len(recs)-1]
	if last.Model != "gpt-5.2" || last.PreviousResponseID != "" {
		t.Fatalf("request after the choice: model %s, previous_response_id %q (want a full request)", last.Model, last.PreviousResponseID)
	}
	in, err := td.d.Inspect(context.Background(), rpc.InspectParams{SessionID: string(id)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := in.Session.Requests
	if r := reqs[len(reqs)-1]; r.Kind != "full" || r.FullReason != "instructions, tools or model changed" || in.Session.Model != "gpt-5.2" {
		t.Fatalf("inspect: last request %s (%q), model %s", r.Kind, r.FullReason, in.Session.Model)
	}

	b.setOption(id, optionEffort, "xhigh")
	a.waitFor("the effort at A", func(ups []acp.SessionUpdate) bool { return current(lastOptions(ups)) == "ask/gpt-5.2/xhigh" })
	n := len(td.sim.Received())
	a.prompt(id, "think harder")
	var reasoning struct{ Effort string }
	if r := td.waitRequests(n + 1)[n]; json.Unmarshal(r.Reasoning, &reasoning) != nil || reasoning.Effort != "xhigh" {
		t.Fatalf("reasoning after choosing xhigh: %s", r.Reasoning)
	}

	opts = a.setOption(id, optionModel, "gpt-4o")
	if current(opts) != "ask/gpt-4o/-" {
		t.Fatalf("after choosing gpt-4o: %s", current(opts))
	}
	n = len(td.sim.Received())
	a.prompt(id, "plainly")
	if r := td.waitRequests(n + 1)[n]; r.Model != "gpt-4o" || r.Reasoning != nil {
		t.Fatalf("gpt-4o request: model %s, reasoning %s", r.Model, r.Reasoning)
	}

	td.d.Close()
	td.restart()
	c := td.connect()
	c.initialize()
	if got := current(c.resume(id, td.root).ConfigOptions); got != "ask/gpt-4o/-" {
		t.Fatalf("after a restart: %s", got)
	}
}

// session/set_mode and the mode option are one setting: either changes
// it for every attached editor, which hears both current_mode_update and
// config_option_update; the shell's network and the stored mode follow.
func TestModeOptionAgreesWithSetMode(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	b := td.connect()
	b.initialize()
	b.resume(id, td.root)

	a.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	for name, e := range map[string]*editor{"A": a, "B": b} {
		e.waitFor(name+" hears set_mode", func(ups []acp.SessionUpdate) bool {
			return lastMode(ups) == ModeFullAuto && current(lastOptions(ups)) == "full-auto/sim-model/medium"
		})
	}
	if opts := b.setOption(id, optionMode, ModeReadOnly); current(opts) != "read-only/sim-model/medium" {
		t.Fatalf("set_config_option mode answered %s", current(opts))
	}
	for name, e := range map[string]*editor{"A": a, "B": b} {
		e.waitFor(name+" hears the mode option", func(ups []acp.SessionUpdate) bool {
			return lastMode(ups) == ModeReadOnly && current(lastOptions(ups)) == "read-only/sim-model/medium"
		})
	}
	r := a.resume(id, td.root)
	if r.Modes.CurrentModeId != ModeReadOnly || current(r.ConfigOptions) != "read-only/sim-model/medium" {
		t.Fatalf("resume: modes say %s, options %s", r.Modes.CurrentModeId, current(r.ConfigOptions))
	}
	// Read-only is in force: a write is refused without asking.
	a.prompt(id, writeA)
	if !strings.Contains(toolOutputs(a.updates()), "read-only") {
		t.Fatalf("a write in read-only mode: %q", toolOutputs(a.updates()))
	}
}

func lastMode(ups []acp.SessionUpdate) acp.SessionModeId {
	var m acp.SessionModeId
	for _, u := range ups {
		if u.CurrentModeUpdate != nil {
			m = u.CurrentModeUpdate.CurrentModeId
		}
	}
	return m
}

// toolOutputs joins the text of every tool call update.
func toolOutputs(ups []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range ups {
		if u.ToolCallUpdate == nil {
			continue
		}
		for _, c := range u.ToolCallUpdate.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				b.WriteString(c.Content.Content.Text.Text)
			}
		}
	}
	return b.String()
}

// A bad session/set_config_option is -32602 naming what is wrong, and
// changes nothing.
func TestSetConfigOptionBadInput(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.setOption(id, optionModel, "gpt-4o")
	for _, tc := range []struct {
		params map[string]any
		code   int64
		says   string
	}{
		{map[string]any{"sessionId": id, "configId": "colour", "value": "red"}, int64(jsonrpc2.InvalidParams), `configId: unknown option "colour"`},
		{map[string]any{"sessionId": id, "configId": "model", "value": "gpt-99"}, int64(jsonrpc2.InvalidParams), `value: model cannot be "gpt-99"`},
		{map[string]any{"sessionId": id, "configId": "mode", "value": "yolo"}, int64(jsonrpc2.InvalidParams), "one of read-only, ask, auto-edit, full-auto"},
		{map[string]any{"sessionId": id, "configId": "model", "type": "boolean", "value": true}, int64(jsonrpc2.InvalidParams), "value: model takes a value id"},
		{map[string]any{"sessionId": id, "configId": "model"}, int64(jsonrpc2.InvalidParams), "value: model takes a value id (a string), got nothing"},
		{map[string]any{"sessionId": id, "value": "o3"}, int64(jsonrpc2.InvalidParams), "configId: is required"},
		{map[string]any{"sessionId": id, "configId": "thought_level", "value": "high"}, int64(jsonrpc2.InvalidParams), "gpt-4o does not reason"},
		{map[string]any{"sessionId": "ses_nope", "configId": "model", "value": "o3"}, int64(rpc.CodeResourceNotFound), "ses_nope"},
	} {
		err := ed.call(rpc.MethodSessionSetConfigOption, tc.params, nil)
		var we *jsonrpc2.Error
		if !errors.As(err, &we) || int64(we.Code) != tc.code || !strings.Contains(we.Message, tc.says) {
			t.Errorf("%v: %v; want %d saying %q", tc.params, err, tc.code, tc.says)
		}
	}
	if got := current(ed.resume(id, td.root).ConfigOptions); got != "ask/gpt-4o/-" {
		t.Errorf("after the refusals: %s", got)
	}
}

// The configured model is said to come from HEARTH_MODEL only when that
// variable named it; otherwise it is hearth's default.
func TestModelValuesSayWhereTheModelComesFrom(t *testing.T) {
	desc := func(values acp.SessionConfigSelectOptionsUngrouped, m string) string {
		for _, v := range values {
			if string(v.Value) == m && v.Description != nil {
				return *v.Description
			}
		}
		t.Fatalf("no value %s in %+v", m, values)
		return ""
	}
	m := session.DefaultModel
	if got := desc(modelValues(m, m, false), m); strings.Contains(got, "HEARTH_MODEL).") || !strings.HasPrefix(got, "hearth's default") {
		t.Errorf("unset HEARTH_MODEL: %q", got)
	}
	if got := desc(modelValues(m, m, true), m); !strings.HasPrefix(got, "Configured (HEARTH_MODEL).") {
		t.Errorf("HEARTH_MODEL set: %q", got)
	}
}
