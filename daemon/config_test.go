package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
)

// The reasoning, lane and keepalive variables: defaults, accepted values,
// and a clear start-up error naming the variable for anything else.
func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HEARTH_DATA_DIR", dir)
	t.Setenv("HEARTH_SOCKET", dir+"/s")
	for _, v := range []string{"HEARTH_REASONING_EFFORT", "HEARTH_REASONING_SUMMARY", "HEARTH_LANES", "HEARTH_KEEPALIVE", "HEARTH_WATCH_MAX_DIRS"} {
		t.Setenv(v, "")
	}
	c, err := FromEnv()
	if err != nil || c.Lanes != session.LanesAuto || c.ReasoningEffort != "" || c.Keepalive != 0 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	cfg := session.Config{ReasoningEffort: c.ReasoningEffort, ReasoningSummary: c.ReasoningSummary}.WithDefaults()
	if cfg.ReasoningEffort != "medium" || cfg.ReasoningSummary != "auto" || cfg.Lanes != session.LanesAuto || cfg.KeepaliveInterval != 30*time.Second {
		t.Errorf("session defaults: %+v", cfg)
	}

	t.Setenv("HEARTH_REASONING_EFFORT", "none")
	t.Setenv("HEARTH_REASONING_SUMMARY", "detailed")
	t.Setenv("HEARTH_LANES", "off")
	t.Setenv("HEARTH_KEEPALIVE", "off")
	t.Setenv("HEARTH_WATCH_MAX_DIRS", "-1")
	if c, err = FromEnv(); err != nil || c.ReasoningEffort != "none" || c.ReasoningSummary != "detailed" || c.Lanes != session.LanesOff || c.Keepalive >= 0 || c.WatchMaxDirs != -1 {
		t.Fatalf("set: %+v %v", c, err)
	}

	for v, bad := range map[string]string{"HEARTH_REASONING_EFFORT": "extreme", "HEARTH_REASONING_SUMMARY": "verbose",
		"HEARTH_LANES": "maybe", "HEARTH_KEEPALIVE": "soon", "HEARTH_WATCH_MAX_DIRS": "0"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, bad)
			_, err := FromEnv()
			if err == nil || !strings.Contains(err.Error(), v) || !strings.Contains(err.Error(), bad) {
				t.Errorf("%s=%s: %v", v, bad, err)
			}
		})
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
