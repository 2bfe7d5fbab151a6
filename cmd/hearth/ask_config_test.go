package main

import (
	"io"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
)

// configNotes names each setting in which the running daemon differs from
// the shell, says what to do, and never shows a key.
func TestConfigNotes(t *testing.T) {
	const key, other = "sk-shell-key-1234567", "sk-daemon-key-7654321"
	real := rpc.Status{PID: 42, Version: version, BaseURL: "https://api.openai.com/v1", APIKey: rpc.MaskSecret(key), Model: "gpt-5.3-codex"}
	shell := modelSettings{Key: key}
	for name, c := range map[string]struct {
		shell     modelSettings
		st        rpc.Status
		inProcess bool
		want      []string // each in the output; none: no notes at all
	}{
		"same":                {shell, real, false, nil},
		"default model named": {shell, func() rpc.Status { s := real; s.Model = "(default)"; return s }(), false, nil},
		"base url": {modelSettings{Key: key, BaseURL: "http://localhost:9/v1"}, real, false,
			[]string{"pid 42", "https://api.openai.com/v1", "http://localhost:9/v1", "hearth stop"}},
		"key unset in shell": {modelSettings{BaseURL: "https://api.openai.com/v1"}, real, false, []string{"sets no OPENAI_API_KEY"}},
		"another key":        {shell, func() rpc.Status { s := real; s.APIKey = rpc.MaskSecret(other); return s }(), false, []string{"not this shell's OPENAI_API_KEY"}},
		"daemon without key": {shell, func() rpc.Status { s := real; s.APIKey = rpc.MaskSecret(""); return s }(), false, []string{"it has no API key"}},
		"model":              {modelSettings{Key: key, Model: "gpt-x"}, real, false, []string{"gpt-5.3-codex", "gpt-x", "HEARTH_MODEL"}},
		"version":            {shell, func() rpc.Status { s := real; s.Version = "0.0.1"; return s }(), false, []string{"hearth 0.0.1"}},
		"daemon simulator":   {shell, rpc.Status{PID: 42, Simulator: true, BaseURL: "http://127.0.0.1:5/v1", Version: version}, false, []string{"built-in simulator, this shell sets OPENAI_API_KEY"}},
		"shell simulator":    {modelSettings{Simulator: true}, real, false, []string{"this shell sets neither"}},
		"both simulator":     {modelSettings{Simulator: true}, rpc.Status{Simulator: true, Version: version}, false, []string{"answering with the built-in simulator"}},
		"in process":         {modelSettings{Simulator: true}, rpc.Status{Simulator: true, Version: "other"}, true, []string{"answering with the built-in simulator"}},
	} {
		t.Run(name, func(t *testing.T) {
			out := strings.Join(configNotes(c.shell, c.st, c.inProcess), "\n")
			if len(c.want) == 0 && out != "" {
				t.Errorf("notes %q, want none", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("notes %q lack %q", out, w)
				}
			}
			if strings.Contains(out, key) || strings.Contains(out, other) {
				t.Errorf("a key is shown: %q", out)
			}
			if c.inProcess && strings.Contains(out, "other settings") {
				t.Errorf("in process there is no other daemon: %q", out)
			}
		})
	}
}

// -y is --yes, as in apt and gh.
func TestAskYesShortFlag(t *testing.T) {
	for _, args := range [][]string{{"-y", "hi"}, {"--yes", "hi"}} {
		o, err := parseAskFlags(args, io.Discard)
		if err != nil || !o.yes || len(o.words) != 1 {
			t.Errorf("%q: yes=%v words=%q err=%v", args, o.yes, o.words, err)
		}
	}
}
