package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
)

// The reasoning, lane and keepalive variables: defaults, accepted values,
// and a clear start-up error naming the variable for anything else.
func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HEARTH_DATA_DIR", dir)
	t.Setenv("HEARTH_SOCKET", dir+"/s")
	for _, v := range []string{"HEARTH_REASONING_EFFORT", "HEARTH_REASONING_SUMMARY", "HEARTH_LANES", "HEARTH_KEEPALIVE", "HEARTH_WATCH_MAX_DIRS", "HEARTH_SHELL_NETWORK",
		"HEARTH_TOOL_OUTPUT_TOKENS", "HEARTH_COMPACTION"} {
		t.Setenv(v, "")
	}
	c, err := FromEnv()
	if err != nil || c.Lanes != responses.LanesAuto || c.ReasoningEffort != "" || c.Keepalive != 0 || c.ShellNetwork != NetworkMode ||
		c.ToolOutputTokens != 0 || c.Compaction != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	cfg := session.Config{ReasoningEffort: c.ReasoningEffort, ReasoningSummary: c.ReasoningSummary}.WithDefaults()
	if cfg.ReasoningEffort != "medium" || cfg.ReasoningSummary != "auto" || cfg.Lanes != responses.LanesAuto || cfg.KeepaliveInterval != 30*time.Second ||
		cfg.ToolOutputBudget() != 10_000 || cfg.Compaction != session.CompactLocal {
		t.Errorf("session defaults: %+v", cfg)
	}

	t.Setenv("HEARTH_REASONING_EFFORT", "none")
	t.Setenv("HEARTH_REASONING_SUMMARY", "detailed")
	t.Setenv("HEARTH_LANES", "off")
	t.Setenv("HEARTH_KEEPALIVE", "off")
	t.Setenv("HEARTH_WATCH_MAX_DIRS", "-1")
	t.Setenv("HEARTH_SHELL_NETWORK", "off")
	t.Setenv("HEARTH_TOOL_OUTPUT_TOKENS", "2500")
	t.Setenv("HEARTH_COMPACTION", "server")
	if c, err = FromEnv(); err != nil || c.ReasoningEffort != "none" || c.ReasoningSummary != "detailed" || c.Lanes != responses.LanesOff || c.Keepalive >= 0 || c.WatchMaxDirs != -1 || c.ShellNetwork != NetworkOff ||
		c.ToolOutputTokens != 2500 || c.Compaction != session.CompactServer {
		t.Fatalf("set: %+v %v", c, err)
	}
	// With a small window, a quarter of it bounds a tool's output.
	if n := (session.Config{ToolOutputTokens: 2500, ContextWindow: 8000}).WithDefaults().ToolOutputBudget(); n != 2000 {
		t.Errorf("budget in an 8,000-token window: %d", n)
	}

	for v, bad := range map[string]string{"HEARTH_REASONING_EFFORT": "extreme", "HEARTH_REASONING_SUMMARY": "verbose",
		"HEARTH_LANES": "maybe", "HEARTH_KEEPALIVE": "soon", "HEARTH_WATCH_MAX_DIRS": "0", "HEARTH_SHELL_NETWORK": "yes",
		"HEARTH_TOOL_OUTPUT_TOKENS": "lots", "HEARTH_COMPACTION": "remote"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, bad)
			_, err := FromEnv()
			if err == nil || !strings.Contains(err.Error(), v) || !strings.Contains(err.Error(), bad) {
				t.Errorf("%s=%s: %v", v, bad, err)
			}
		})
	}
}

// A base URL hearth cannot use is refused at start (New) and on a reload,
// with the variable, what is wrong and an example; the URL's secrets are
// redacted in the message.
func TestConfigCheckBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"not a url":                   "has no scheme",
		"ftp://example.com/v1":        "not ftp",
		"https:///v1":                 "has no host",
		"http://[::1":                 "is not a URL",
		"https://u:hunter2@host/v1":   "", // accepted
		"https://api.openai.com/v1":   "",
		"http://127.0.0.1:8089/v1":    "",
		"ws://user:hunter2@host/v1?x": "not ws",
	} {
		err := Config{BaseURL: in}.Check()
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") ||
			!strings.Contains(err.Error(), "https://api.openai.com/v1")):
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%q: the error shows the password: %v", in, err)
		}
	}
	cfg := Config{DataDir: t.TempDir(), BaseURL: "ftp://example.com/v1"}
	if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("New with an ftp base: %v", err)
	}
	cfg.BaseURL = "http://127.0.0.1:1/v1"
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Reload(Config{BaseURL: "not a url"}); err == nil || d.Config().BaseURL != cfg.BaseURL {
		t.Errorf("reload to a bad base: %v, base now %q", err, d.Config().BaseURL)
	}
}

// HEARTH_MCP_TIMEOUT bounds one MCP tool call; unset means mcp's default.
func TestConfigMCPTimeout(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HEARTH_DATA_DIR", dir)
	t.Setenv("HEARTH_SOCKET", dir+"/s")
	t.Setenv("HEARTH_MCP_TIMEOUT", "")
	if c, err := FromEnv(); err != nil || c.MCPCallTimeout != 0 {
		t.Fatalf("unset: %v %v", c.MCPCallTimeout, err)
	}
	t.Setenv("HEARTH_MCP_TIMEOUT", "2m")
	if c, err := FromEnv(); err != nil || c.MCPCallTimeout != 2*time.Minute {
		t.Fatalf("2m: %v %v", c.MCPCallTimeout, err)
	}
	t.Setenv("HEARTH_MCP_TIMEOUT", "soon")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "HEARTH_MCP_TIMEOUT") {
		t.Errorf("soon: %v", err)
	}
}

// In simulator mode the caller runs the simulator and gives its URL: New
// and Reload refuse simulator mode without one, rather than send requests
// to OpenAI's default base with no key.
func TestSimulatorModeNeedsTheCallersURL(t *testing.T) {
	cfg := Config{DataDir: t.TempDir(), Simulator: true}
	if d, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "simulator") {
		if d != nil {
			d.Close()
		}
		t.Fatalf("New in simulator mode without a base URL: %v", err)
	}
	cfg.BaseURL = "http://127.0.0.1:1/v1"
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Reload(Config{Simulator: true, Model: "other"}); err == nil || d.Config().BaseURL != cfg.BaseURL || d.Config().Model != "" {
		t.Errorf("reload into simulator mode without a base URL: %v, now %q %q", err, d.Config().BaseURL, d.Config().Model)
	}
	if !d.Status().Simulator {
		t.Error("status does not say simulator")
	}
}

// HEARTH_SIMULATOR=off: no key and no base URL is no simulator but a
// configuration that needs a login; with a key it needs none.
func TestConfigSimulatorOff(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HEARTH_DATA_DIR", dir)
	t.Setenv("HEARTH_SOCKET", dir+"/s")
	t.Setenv("HEARTH_SIMULATOR", "off")
	c, err := FromEnv()
	if err != nil || c.Simulator || !c.NoSimulator || !c.LoginNeeded() {
		t.Fatalf("off, no key: %+v %v", c, err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-x")
	if c, err := FromEnv(); err != nil || c.LoginNeeded() {
		t.Errorf("off, a key: login needed %v (%v)", c.LoginNeeded(), err)
	}
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("HEARTH_SIMULATOR", "")
	if c, err := FromEnv(); err != nil || !c.Simulator || c.LoginNeeded() {
		t.Errorf("default: simulator %v, login needed %v (%v)", c.Simulator, c.LoginNeeded(), err)
	}
	t.Setenv("HEARTH_SIMULATOR", "maybe")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "HEARTH_SIMULATOR") {
		t.Errorf("maybe: %v", err)
	}
}
