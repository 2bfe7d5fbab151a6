package sandbox

import (
	"slices"
	"testing"
)

func TestToolEnvAllowlist(t *testing.T) {
	tests := []struct {
		entry string
		keep  bool
	}{
		{"PATH=/usr/bin:/bin", true},
		{"HOME=/home/u", true},
		{"USER=u", true},
		{"LOGNAME=u", true},
		{"SHELL=/bin/bash", true},
		{"LANG=en_US.UTF-8", true},
		{"LC_ALL=C.UTF-8", true},
		{"LC_TIME=de_DE.UTF-8", true},
		{"TERM=xterm-256color", true},
		{"TZ=Europe/Paris", true},
		{"TMPDIR=/var/tmp", true},
		{"GOPATH=/home/u/go", true}, // listed in HEARTH_TOOL_ENV below
		{"EDITOR=vim", false},
		{"DATABASE_URL=postgres://u:p@h/db", false},
		{"HTTPS_PROXY=http://u:p@proxy:3128", false},
		{"OPENAI_API_KEY=sk-1", false},
		{"OPENAI_BASE_URL=https://x", false},
		{"HEARTH_SOCKET=/run/h.sock", false},
		{"HEARTH_TOOL_ENV=GOPATH", false},
		{"GITHUB_TOKEN=ghp_x", false},
		{"SSH_AUTH_SOCK=/tmp/agent", false},
		{"path=/lowercase/is/another/name", false},
		{"=C:=C:\\work", false},
		{"MALFORMED", false},
	}
	var environ, want []string
	for _, tt := range tests {
		environ = append(environ, tt.entry)
		if tt.keep {
			want = append(want, tt.entry)
		}
	}
	if got := toolEnv(environ, " GOPATH, ,NOT_SET"); !slices.Equal(got, want) {
		t.Errorf("toolEnv kept\n%q\nwant\n%q", got, want)
	}
	if got := toolEnv([]string{"GOPATH=/x", "PATH=/bin"}, ""); !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("without HEARTH_TOOL_ENV toolEnv kept %q", got)
	}
}
