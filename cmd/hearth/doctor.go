package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// check is one line of `hearth doctor`, and one element of its --json.
type check struct {
	Status string `json:"status"` // ok, warn or fail
	Check  string `json:"check"`
	Detail string `json:"detail"` // what was found and, when not ok, the fix
}

// doctorIndent is the hanging indent of a check's wrapped lines: past the
// status column.
const doctorIndent = 6

// doctorTimeout bounds each check that talks to something: DNS, the daemon,
// the service manager.
const doctorTimeout = 3 * time.Second

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", stderr)
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	checks := doctor(ctx, cfg)
	if *asJSON {
		if err := writeJSON(stdout, checks); err != nil {
			return err
		}
	} else {
		home, _ := os.UserHomeDir()
		printChecks(stdout, checks, home)
	}
	for _, c := range checks {
		if c.Status == "fail" {
			return &exitError{1, nil}
		}
	}
	return nil
}

// printChecks prints one check a line, in columns, wrapped at statusWidth
// with a hanging indent of doctorIndent; a path too long for a line is
// shown from home's "~" rather than run past the terminal's edge.
func printChecks(w io.Writer, checks []check, home string) {
	nameWidth := 0
	for _, c := range checks {
		nameWidth = max(nameWidth, utf8.RuneCountInString(c.Check))
	}
	for _, c := range checks {
		col := doctorIndent + nameWidth + 2
		detail := abbreviateHome(c.Detail, home, statusWidth-doctorIndent)
		line := fmt.Sprintf("%-*s%-*s", doctorIndent, c.Status, nameWidth+2, c.Check) + wrapFrom(detail, col, doctorIndent, statusWidth)
		fmt.Fprintln(w, trimLineEnds(line))
	}
}

// abbreviateHome writes each word of s longer than width that starts with
// home from "~" instead.
func abbreviateHome(s, home string, width int) string {
	if home == "" || home == "/" {
		return s
	}
	words := strings.Split(s, " ")
	for i, word := range words {
		if rest, ok := strings.CutPrefix(word, home+string(filepath.Separator)); ok && utf8.RuneCountInString(word) > width {
			words[i] = "~" + string(filepath.Separator) + rest
		}
	}
	return strings.Join(words, " ")
}

// trimLineEnds drops the spaces that end each of s's lines.
func trimLineEnds(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// doctor runs every check in order.
func doctor(ctx context.Context, cfg daemon.Config) []check {
	var out []check
	add := func(status, name, format string, a ...any) {
		out = append(out, check{status, name, fmt.Sprintf(format, a...)})
	}
	home, _ := os.UserHomeDir()
	envFile := installer.Spec{Home: home}.EnvFile()
	fileEnv, envErr := installer.LoadEnvFile(envFile)

	// The env file the service reads.
	switch info, err := os.Stat(envFile); {
	case errors.Is(err, fs.ErrNotExist):
		add("ok", "env file", "%s not present (optional; `hearth install` creates it)", envFile)
	case err != nil:
		add("fail", "env file", "%v", err)
	case info.Mode().Perm()&0o077 != 0:
		add("fail", "env file", "%s is mode %04o and may hold your key: chmod 600 %s", envFile, info.Mode().Perm(), envFile)
	case envErr != nil:
		add("fail", "env file", "%v", envErr)
	default:
		add("ok", "env file", "%s, mode 0600", envFile)
	}

	// API key and base URL, as the service would see them.
	key, keyFrom := cfg.APIKey, "OPENAI_API_KEY"
	if key == "" && fileEnv["OPENAI_API_KEY"] != "" {
		key, keyFrom = fileEnv["OPENAI_API_KEY"], envFile
	}
	base := cfg.BaseURL
	if base == "" {
		base = fileEnv["OPENAI_BASE_URL"]
	}
	noSimulator := cfg.NoSimulator || os.Getenv("HEARTH_SIMULATOR") == "" && strings.TrimSpace(fileEnv["HEARTH_SIMULATOR"]) == "off"
	simulator := key == "" && base == "" && !noSimulator
	switch {
	case key != "":
		add("ok", "api key", "set in %s (%s)", keyFrom, maskKey(key))
	case noSimulator:
		add("fail", "api key", "none, and HEARTH_SIMULATOR=off: editors are asked to log in; run `hearth login` (it stores the key in %s)", envFile)
	case simulator:
		add("warn", "api key", "none: simulator mode (answers come from the built-in simulator); run `hearth login` to give hearth your key (it goes in %s)", envFile)
	default:
		add("fail", "api key", "OPENAI_BASE_URL is set but no OPENAI_API_KEY: set it in the environment or in %s", envFile)
	}
	switch {
	case simulator:
		add("ok", "base url", "built-in simulator (no network)")
	case base == "":
		add(checkBaseURL(ctx, responses.DefaultBaseURL))
	default:
		add(checkBaseURL(ctx, base))
	}

	add(checkSocketDir(cfg.Socket))
	add(checkDataDir(cfg.DataDir))
	out = append(out, daemonChecks(ctx, cfg)...)
	if runtime.GOOS == "linux" {
		add(checkInotify("max_user_watches", 65536))
		add(checkInotify("max_user_instances", 128))
	}
	add(checkDatabase(ctx, cfg.DBPath()))
	add(checkService(ctx, cfg, home))
	return append(out, sandboxChecks(cfg, fileEnv)...)
}

func maskKey(k string) string {
	if len(k) <= 8 {
		return "****"
	}
	return k[:3] + "…" + k[len(k)-4:]
}

// checkBaseURL parses and resolves the base URL. What it prints goes
// through rpc.RedactURL: the URL may carry a proxy's password or a key.
func checkBaseURL(ctx context.Context, base string) (string, string, string) {
	const name = "base url"
	shown := rpc.RedactURL(base)
	u, err := url.Parse(base)
	if err != nil {
		// url.Error quotes the URL: redact the whole message.
		return "fail", name, rpc.RedactURLs(fmt.Sprintf("OPENAI_BASE_URL=%q does not parse: %v; use e.g. https://api.openai.com/v1", shown, err))
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Hostname() == "" {
		return "fail", name, fmt.Sprintf("OPENAI_BASE_URL=%q is not an http(s) URL with a host; use e.g. https://api.openai.com/v1", shown)
	}
	if net.ParseIP(u.Hostname()) != nil {
		return "ok", name, shown
	}
	rctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(rctx, u.Hostname())
	if err != nil {
		return "fail", name, fmt.Sprintf("%s: %s does not resolve (%v); check the URL and DNS", shown, u.Hostname(), err)
	}
	return "ok", name, fmt.Sprintf("%s (%s resolves to %s)", shown, u.Hostname(), addrs[0])
}

// checkSocketDir applies the daemon's own rules to the socket's path
// (safesocket.CanListen: its length, a directory it can write) and directory
// (safesocket.CheckDir), then looks at the socket.
func checkSocketDir(socket string) (string, string, string) {
	const name = "socket"
	dir := filepath.Dir(socket)
	if err := safesocket.CanListen(socket); err != nil {
		return "fail", name, err.Error()
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "ok", name, fmt.Sprintf("%s not created yet (the daemon creates it 0700)", dir)
	case err != nil:
		return "fail", name, err.Error()
	}
	if err := safesocket.CheckDir(dir); err != nil {
		return "fail", name, err.Error()
	}
	s, err := os.Lstat(socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "ok", name, fmt.Sprintf("%s (directory %04o), no socket yet", dir, info.Mode().Perm())
	case err != nil:
		return "fail", name, err.Error()
	case s.Mode()&fs.ModeSocket == 0:
		return "fail", name, fmt.Sprintf("%s is not a socket; remove it", socket)
	case s.Mode().Perm()&0o077 != 0:
		return "fail", name, fmt.Sprintf("%s is mode %04o; restart the daemon (it creates the socket 0600)", socket, s.Mode().Perm())
	}
	return "ok", name, fmt.Sprintf("%s (directory %04o, socket 0600)", socket, info.Mode().Perm())
}

// checkDataDir looks at who can reach the data directory: it holds the
// transcripts (the user's code) and the logs. hearth creates it 0700 and its
// files 0600, but never chmods a directory that already existed. Others able
// to write to it could replace the database: fail. Others able to read or
// traverse it see file names and anything not 0600: warn. Both with the fix.
func checkDataDir(dir string) (string, string, string) {
	const name = "data dir"
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "ok", name, fmt.Sprintf("%s not created yet (hearth creates it 0700)", dir)
	case err != nil:
		return "fail", name, err.Error()
	case !info.IsDir():
		return "fail", name, fmt.Sprintf("%s is not a directory; move it aside or set HEARTH_DATA_DIR", dir)
	case info.Mode().Perm()&0o022 != 0:
		return "fail", name, fmt.Sprintf("%s is mode %04o: other users can replace hearth's database and logs; chmod 700 %s", dir, info.Mode().Perm(), dir)
	case info.Mode().Perm()&0o077 != 0:
		return "warn", name, fmt.Sprintf("%s is mode %04o: other users can read hearth's data; chmod 700 %s", dir, info.Mode().Perm(), dir)
	}
	return "ok", name, fmt.Sprintf("%s (%04o)", dir, info.Mode().Perm())
}

// daemonChecks looks at the running daemon: that it answers, what it uses
// (which may not be what this shell has) and whether it reaches its model
// API (it probes, _hearth/probe). Without a daemon, doctor probes the
// shell's key and base URL itself, as a daemon started now would use them.
func daemonChecks(ctx context.Context, cfg daemon.Config) []check {
	shell := shellConfig(cfg)
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	conn, err := safesocket.Dial(cctx, cfg.Socket)
	if errors.Is(err, safesocket.ErrUnsafe) {
		return []check{{"fail", "daemon", err.Error()}}
	}
	if err != nil {
		return []check{
			{"warn", "daemon", "not running; editors start it through `hearth acp`, as `hearth ask` does, or run `hearth start` / `hearth serve`"},
			probeHere(ctx, shell),
		}
	}
	c := rpc.NewClient(conn, rpc.ClientOptions{})
	defer c.Close()
	var init acp.InitializeResponse
	if err := c.Call(cctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init); err != nil {
		return []check{{"fail", "daemon", fmt.Sprintf("the socket answers but initialize failed: %v; restart it (`hearth restart`, or `hearth stop`)", err)}}
	}
	var st rpc.Status
	if err := c.Call(cctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		return []check{{"fail", "daemon", fmt.Sprintf("_hearth/status failed: %v", err)}}
	}
	out := []check{{"ok", "daemon", fmt.Sprintf("running: hearth %s, pid %d, %s open", st.Version, st.PID, plural(len(st.Workspaces), "workspace"))}}

	uses := fmt.Sprintf("%s, key %s, model %s", baseOrDefault(st.BaseURL), st.APIKey, modelOrDefault(st.Model))
	if st.Simulator {
		uses = "the built-in simulator, model " + modelOrDefault(st.Model)
	}
	if diffs := configDiffs(shell, st); len(diffs) > 0 {
		out = append(out, check{"warn", "daemon config", fmt.Sprintf("started with other settings than this shell's: %s. `hearth stop` (or `hearth restart` for the service) makes it start again with this shell's settings",
			strings.Join(diffs, "; "))})
	} else {
		out = append(out, check{"ok", "daemon config", "uses " + uses})
	}

	pctx, pcancel := context.WithTimeout(ctx, 15*time.Second)
	defer pcancel()
	var pr rpc.ProbeResult
	if err := c.Call(pctx, rpc.MethodHearthProbe, nil, &pr); err != nil {
		return append(out, check{"warn", "model api", fmt.Sprintf("the daemon cannot probe its model API (%v); it may be older than this hearth: restart it", err)})
	}
	if st.Simulator && pr.Status == "ok" {
		// The simulator takes any key: "the key accepted" would say the
		// user has one.
		return append(out, check{"ok", "model api", "from the daemon: the built-in simulator answers (it needs no key)"})
	}
	return append(out, check{pr.Status, "model api", "from the daemon: " + rpc.RedactURLs(pr.Detail)})
}

// probeHere probes the model API a daemon started from this shell would
// use: the simulator needs nothing; a base URL that Check refuses is
// reported by the base url check already.
func probeHere(ctx context.Context, shell modelSettings) check {
	const name = "model api"
	if shell.Simulator {
		return check{"ok", name, "the built-in simulator (no network)"}
	}
	if err := (daemon.Config{BaseURL: shell.BaseURL}).Check(); err != nil {
		return check{"fail", name, "not probed: fix OPENAI_BASE_URL first"}
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r := responses.Probe(pctx, responses.Config{BaseURL: shell.BaseURL, APIKey: shell.Key, HandshakeTimeout: 10 * time.Second})
	return check{r.Status, name, rpc.RedactURLs(r.Detail)}
}

func checkInotify(limit string, min int) (string, string, string) {
	name := "inotify " + limit
	path := "/proc/sys/fs/inotify/" + limit
	b, err := os.ReadFile(path)
	if err != nil {
		return "warn", name, fmt.Sprintf("cannot read %s (%v); the watcher falls back to polling when inotify fails", path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return "warn", name, fmt.Sprintf("%s: %v", path, err)
	}
	if n < min {
		return "warn", name, fmt.Sprintf("%d is low for large workspaces: sudo sysctl fs.inotify.%s=%d (persist it in /etc/sysctl.d/)", n, limit, min*8)
	}
	return "ok", name, strconv.Itoa(n)
}

func checkDatabase(ctx context.Context, path string) (string, string, string) {
	const name = "database"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "ok", name, fmt.Sprintf("%s not created yet", path)
	}
	db, err := store.Open(path)
	if errors.Is(err, store.ErrCorrupt) {
		return "fail", name, err.Error() // it says how to move the file aside
	}
	if err != nil {
		return "fail", name, fmt.Sprintf("%v; move the file aside (hearth starts a new one) or restore a backup", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); errors.Is(err, store.ErrCorrupt) {
		return "fail", name, err.Error() // it says how to move the file aside
	} else if err != nil {
		return "fail", name, fmt.Sprintf("%v; %s", err, cmp.Or(store.Advice(path, err), "move the file aside or restore a backup"))
	}
	return "ok", name, path + ": integrity ok"
}

func checkService(ctx context.Context, cfg daemon.Config, home string) (string, string, string) {
	const name = "service"
	p, err := installer.NewPlan(runtime.GOOS, installer.Spec{Home: home, Socket: cfg.Socket, DataDir: cfg.DataDir, ConfigHome: installer.ConfigHome()})
	if err != nil {
		return "ok", name, err.Error()
	}
	if _, err := os.Stat(p.Unit.Path); err != nil {
		return "ok", name, fmt.Sprintf("not installed (optional: `hearth install` starts hearth at login; %s)", p.Unit.Path)
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if err := installer.Check(cctx, runtime.GOOS); err != nil {
		return "warn", name, fmt.Sprintf("%s is installed but %v", p.Unit.Path, err)
	}
	return "ok", name, fmt.Sprintf("installed: %s", p.Unit.Path)
}

// sandboxChecks say what the shell tool's sandbox holds on this machine —
// what the kernel lets it enforce, which unix sockets commands can reach,
// how their processes are bounded, whether "no network" holds: never
// pretend. fileEnv is the env file's variables.
func sandboxChecks(cfg daemon.Config, fileEnv map[string]string) []check {
	var out []check
	add := func(status, name, format string, a ...any) {
		out = append(out, check{status, name, fmt.Sprintf(format, a...)})
	}
	// What the kernel lets the shell tool's sandbox enforce: never pretend.
	if sb := sandbox.Status(); strings.HasPrefix(sb, "not sandboxed") {
		add("warn", "sandbox", "%s; shell commands run with your full rights", sb)
	} else {
		add("ok", "sandbox", "%s", sb)
	}
	// Which unix sockets commands can reach: hearth's is refused by the
	// daemon, the others are hidden where a mount namespace is possible.
	allowed := os.Getenv(sandboxSocketsVar)
	if allowed == "" {
		allowed = fileEnv[sandboxSocketsVar]
	}
	if ss := sandbox.SocketStatus(sandboxSockets(allowed)); strings.HasPrefix(ss, "every ") {
		add("warn", "sockets", "%s", ss)
	} else {
		add("ok", "sockets", "%s", ss)
	}
	if runtime.GOOS == "linux" {
		if pb := sandbox.ProcessBoundStatus(sandboxPids()); strings.Contains(pb, "nothing bounds") {
			add("warn", "processes", "%s", pb)
		} else {
			add("ok", "processes", "%s", pb)
		}
	}
	// Whether a mode's "no network" holds here, and what it leaves open.
	switch nw := sandbox.NetworkStatus(); {
	case cfg.ShellNetwork == daemon.NetworkOn:
		add("ok", "network", "%s", daemon.ShellNetworkSummary(cfg.ShellNetwork))
	case strings.HasPrefix(nw, "cannot"):
		add("warn", "network", "%s, but %s", daemon.ShellNetworkSummary(cfg.ShellNetwork), nw)
	default:
		add("ok", "network", "%s; %s", daemon.ShellNetworkSummary(cfg.ShellNetwork), nw)
	}
	return out
}
