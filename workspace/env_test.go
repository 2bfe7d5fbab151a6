package workspace

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	tests := []struct {
		entry string
		keep  bool
	}{
		{"PATH=/usr/bin:/bin", true},
		{"HOME=/home/u", true},
		{"LANG=en_US.UTF-8", true},
		{"TERM=xterm-256color", true},
		{"USER=u", true},
		{"GOPATH=/home/u/go", true},
		{"EDITOR=vim", true},
		{"=C:=C:\\work", true}, // Windows per-drive directory
		{"OPENAI_API_KEY=sk-1", false},
		{"OPENAI_BASE_URL=https://x", false},
		{"OPENAI_ORG=org", false},
		{"ANTHROPIC_MODEL=m", false},
		{"AWS_REGION=eu-west-1", false},
		{"AWS_PROFILE=dev", false},
		{"HEARTH_SOCKET=/run/h.sock", false},
		{"hearth_debug=1", false},
		{"GITHUB_TOKEN=ghp_x", false},
		{"GH_TOKEN=gho_x", false},
		{"FAKE_API_KEY=k", false},
		{"npm_config_authtoken=t", false},
		{"my_secret=s", false},
		{"DB_PASSWORD=p", false},
		{"PGPASSWD=p", false},
		{"GOOGLE_APPLICATION_CREDENTIALS=/x.json", false},
		{"SSH_AUTH_SOCK=/tmp/agent", false},
		{"XAUTHORITY=/x", false},
		{"DBUS_SESSION_BUS_ADDRESS=unix:x", false},
		{"Api_Key=k", false},
		{"MALFORMED", false},
	}
	var environ, want []string
	for _, tt := range tests {
		environ = append(environ, tt.entry)
		if tt.keep {
			want = append(want, tt.entry)
		}
	}
	if got := scrubEnv(environ); !slices.Equal(got, want) {
		t.Errorf("scrubEnv kept\n%q\nwant\n%q", got, want)
	}
	for _, tt := range tests {
		if got := scrubEnv([]string{tt.entry}); (len(got) == 1) != tt.keep {
			t.Errorf("scrubEnv(%q) = %q, keep = %v", tt.entry, got, tt.keep)
		}
	}
}
