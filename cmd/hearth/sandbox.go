package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// sandboxCommand is the hidden subcommand that runs one shell command of the
// model confined (sandbox.Exec); main dispatches it before anything
// else.
const sandboxCommand = "__sandbox-exec"

// configureSandbox makes this process's shell tool run commands through the
// sandbox helper, denying hearth's data directory, its configuration
// directories (the env file; the user's AGENTS.md, which a command could
// otherwise rewrite into instructions for every later session) and its
// socket's directory, and granting writes on the build caches (cacheDirs).
// The socket's directory is left out when it lies inside the temp dir (the default
// /tmp/hearth-$UID without XDG_RUNTIME_DIR): denying it would split the
// temp dir's grant, and commands could then create nothing directly in
// /tmp. Landlock before ABI 9 cannot refuse connect(2) to the socket anyway:
// where the network is off the helper hides the socket in a mount namespace
// (sandbox.Config.Socket), and the daemon refuses every connection a
// command makes (daemon/socket_call.go). Every other unix socket is hidden
// there too, but those HEARTH_SANDBOX_SOCKETS lists (sandboxSockets), and
// $XDG_RUNTIME_DIR is covered.
func configureSandbox(cfg daemon.Config) {
	exe, err := helperExe()
	if err != nil {
		return // the shell tool runs unconfined; SandboxStatus says what the kernel offers
	}
	deny := []string{cfg.DataDir}
	if home, err := os.UserHomeDir(); err == nil {
		deny = append(deny, filepath.Dir(installer.Spec{Home: home}.EnvFile()))
	}
	for _, d := range daemon.ConfigDirs() {
		if !slices.Contains(deny, d) {
			deny = append(deny, d) // $XDG_CONFIG_HOME/hearth: the user's AGENTS.md
		}
	}
	sockDir, tmp := filepath.Dir(cfg.Socket), filepath.Clean(os.TempDir())
	if sockDir != tmp && !strings.HasPrefix(sockDir, tmp+string(filepath.Separator)) {
		deny = append(deny, sockDir)
	}
	sandbox.Set(sandbox.Config{
		Helper:     []string{exe, sandboxCommand},
		Deny:       deny,
		Write:      cacheDirs(),
		Socket:     cfg.Socket,
		Sockets:    sandboxSockets(os.Getenv(sandboxSocketsVar)),
		RuntimeDir: os.Getenv("XDG_RUNTIME_DIR"),
		Pids:       sandboxPids(),
	})
}

// sandboxSocketsVar lists, like PATH, the unix sockets the user lets
// commands reach (HEARTH_SANDBOX_SOCKETS=$SSH_AUTH_SOCK); none by default.
const sandboxSocketsVar = "HEARTH_SANDBOX_SOCKETS"

// sandboxSockets is the list HEARTH_SANDBOX_SOCKETS's value holds, each
// entry's $VARIABLES expanded (an env file may hold "$SSH_AUTH_SOCK" as it
// is); empty and relative entries are dropped.
func sandboxSockets(value string) []string {
	var out []string
	for _, p := range filepath.SplitList(value) {
		if p = filepath.Clean(os.ExpandEnv(strings.TrimSpace(p))); filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// toolEnvNames are the variables HEARTH_TOOL_ENV names: kept when the daemon
// drops secret-looking variables from its environment.
func toolEnvNames() map[string]bool {
	names := map[string]bool{}
	for n := range strings.SplitSeq(os.Getenv("HEARTH_TOOL_ENV"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names[n] = true
		}
	}
	return names
}

// secretWords mark a variable's name as a credential's.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

// secretLooking reports whether an environment variable may hold a
// credential: its name says so, or its value is a URL with a password
// (postgres://u:p@h/db). Proxies (HTTPS_PROXY, ...) are kept even then:
// the daemon needs them to reach the API.
func secretLooking(name, value string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	if strings.HasSuffix(upper, "_PROXY") {
		return false
	}
	scheme, rest, ok := strings.Cut(value, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, " /") {
		return false
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	return ok && !strings.ContainsAny(userinfo, "/?#") && strings.Contains(userinfo, ":")
}

// sandboxPids is HEARTH_SANDBOX_PIDS: at most this many processes (threads
// included) one command may hold at once; unset or not a positive number,
// the sandbox's default (a sixteenth of the machine's pids, 512–8192).
func sandboxPids() int {
	n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("HEARTH_SANDBOX_PIDS")))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
