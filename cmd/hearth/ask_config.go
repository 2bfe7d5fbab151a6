package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
)

// modelSettings is what decides which model API a daemon talks to: what
// `hearth ask` compares between its shell and the running daemon. A value
// per ask; Key never leaves the process (only its mask is compared).
type modelSettings struct {
	BaseURL   string
	Key       string
	Model     string
	Simulator bool
}

// shellConfig is what a daemon started from this shell would use: the
// environment, then ~/.config/hearth/env for what it leaves unset (as
// serve's applyEnvFile does), without changing this process's environment.
func shellConfig(cfg daemon.Config) modelSettings {
	s := modelSettings{BaseURL: cfg.BaseURL, Key: cfg.APIKey, Model: cfg.Model}
	simulator := os.Getenv("HEARTH_SIMULATOR")
	if home, err := os.UserHomeDir(); err == nil {
		file, _ := installer.LoadEnvFile(installer.Spec{Home: home}.EnvFile())
		for name, dst := range map[string]*string{"OPENAI_BASE_URL": &s.BaseURL, "OPENAI_API_KEY": &s.Key, "HEARTH_MODEL": &s.Model,
			"HEARTH_SIMULATOR": &simulator} {
			if _, set := os.LookupEnv(name); !set && file[name] != "" {
				*dst = strings.TrimSpace(file[name])
			}
		}
	}
	s.Simulator = s.Key == "" && s.BaseURL == "" && strings.TrimSpace(simulator) != "off"
	return s
}

// configNotes are the lines ask prints on stderr about the daemon that
// answers: that it is the simulator, and, for a daemon that was already
// running (not this process's), how its settings differ from the shell's.
func configNotes(shell modelSettings, st rpc.Status, inProcess bool) []string {
	var notes []string
	if st.Simulator && (shell.Simulator || inProcess) {
		notes = append(notes, "OPENAI_API_KEY is not set: answering with the built-in simulator")
	}
	if inProcess {
		return notes
	}
	if diffs := configDiffs(shell, st); len(diffs) > 0 {
		notes = append(notes, fmt.Sprintf("the running daemon (pid %d) was started with other settings than this shell's: %s. "+
			"`hearth stop` stops it (the next ask starts one with this shell's settings)",
			st.PID, strings.Join(diffs, "; ")))
	}
	return notes
}

// configDiffs says, one item each, how the running daemon's settings (its
// status) differ from the shell's. The key is compared by its mask and
// never shown.
func configDiffs(shell modelSettings, st rpc.Status) []string {
	var diffs []string
	switch {
	case st.Simulator && !shell.Simulator:
		diffs = append(diffs, "it answers with the built-in simulator, this shell sets OPENAI_API_KEY or OPENAI_BASE_URL")
	case !st.Simulator && shell.Simulator:
		diffs = append(diffs, fmt.Sprintf("it uses %s, this shell sets neither OPENAI_API_KEY nor OPENAI_BASE_URL (the simulator)", baseOrDefault(st.BaseURL)))
	case !st.Simulator:
		if d, s := baseOrDefault(st.BaseURL), baseOrDefault(rpc.RedactURL(shell.BaseURL)); d != s {
			diffs = append(diffs, fmt.Sprintf("its base URL is %s, this shell's OPENAI_BASE_URL is %s", d, s))
		}
		daemonKey, shellKey := st.APIKey != rpc.MaskSecret(""), shell.Key != ""
		switch {
		case daemonKey && !shellKey:
			diffs = append(diffs, "it has an API key, this shell sets no OPENAI_API_KEY")
		case !daemonKey && shellKey:
			diffs = append(diffs, "it has no API key, this shell sets OPENAI_API_KEY")
		case st.APIKey != rpc.MaskSecret(shell.Key):
			diffs = append(diffs, "its API key is not this shell's OPENAI_API_KEY")
		}
	}
	if d, s := modelOrDefault(st.Model), modelOrDefault(shell.Model); d != s {
		diffs = append(diffs, fmt.Sprintf("its model is %s, this shell's HEARTH_MODEL gives %s", d, s))
	}
	if st.Version != "" && st.Version != version {
		diffs = append(diffs, fmt.Sprintf("it is hearth %s, this is %s", st.Version, version))
	}
	return diffs
}

func baseOrDefault(u string) string {
	if u == "" {
		u = responses.DefaultBaseURL
	}
	return strings.TrimSuffix(u, "/")
}

func modelOrDefault(m string) string {
	if m == "" || m == "(default)" {
		return session.DefaultModel
	}
	return m
}
