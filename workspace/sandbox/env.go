package sandbox

import (
	"os"
	"strings"
)

// toolEnvNames are the variables a command the model runs gets from the
// daemon's environment, whatever else the daemon was started with: enough
// to find programs, the user and the locale, nothing that tends to hold a
// credential. An allowlist, because credentials hide under any name
// (DATABASE_URL=postgres://u:pass@h/db, HTTPS_PROXY=http://u:pass@p).
var toolEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR"}

// toolEnvVar names the variable in which the user lists, comma-separated,
// further variables commands may see (HEARTH_TOOL_ENV="GOPATH,GOFLAGS").
const toolEnvVar = "HEARTH_TOOL_ENV"

// toolEnv returns the environment of a command the model runs: the entries
// of environ (as from os.Environ) whose names are in toolEnvNames, start
// with LC_, or are listed in extra (HEARTH_TOOL_ENV's value), in environ's
// order. Everything else is dropped.
func toolEnv(environ []string, extra string) []string {
	allowed := map[string]bool{}
	for _, n := range toolEnvNames {
		allowed[n] = true
	}
	for n := range strings.SplitSeq(extra, ",") {
		if n = strings.TrimSpace(n); n != "" {
			allowed[n] = true
		}
	}
	out := make([]string, 0, len(allowed))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if allowed[name] || strings.HasPrefix(name, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// currentToolEnv is toolEnv of this process's environment now: a SIGHUP
// reload that changes HEARTH_TOOL_ENV applies to the next command.
func currentToolEnv() []string { return toolEnv(os.Environ(), os.Getenv(toolEnvVar)) }

// ToolEnv is the environment the shell tool's commands get now: the
// allowlist above and HEARTH_TOOL_ENV's names, from the daemon's
// environment. The daemon gives the same to the MCP servers it starts.
func ToolEnv() []string { return currentToolEnv() }
