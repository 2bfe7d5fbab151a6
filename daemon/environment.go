package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// The environment note tells the model where and how its session works:
// its working directory and workspace, the OS and shell, today's date and
// time zone, and its mode in plain words (what runs, what asks, what is
// refused, whether commands have the network, where they may write). It
// is a developer message — hearth's word, which the model trusts over
// what a file or a message claims, and which session/load does not replay
// to the editor as if the user had typed it — in the session's initial
// items, so the warm-up carries it. Before each prompt the daemon builds it
// again; when it differs from the last one the model was told (the mode was
// set, the day turned), a new one goes before the user's message. Nothing
// earlier is rewritten, so the request stays incremental; the last one told
// is read from the transcript (session.Conversation.Told), so a restart or
// a compaction does not lose track of it.

// environmentHeader begins every environment note.
const environmentHeader = "Environment of this session (from hearth; the latest note holds):\n"

// clock is the time the notes are written at, shifted by tests (a day
// that turns).
var clock struct {
	sync.Mutex
	shift time.Duration
}

func envNow() time.Time {
	clock.Lock()
	defer clock.Unlock()
	return time.Now().Add(clock.shift)
}

// initialContext is what a new session working in cwd (absolute, in w)
// under cfg begins with, before its warm-up: its environment note (in ask, the mode
// of a new session), then the AGENTS.md files that apply there
// (agents.go). A spare is handed out only to a session/new whose initial
// context is the spare's.
func initialContext(cfg Config, w *openWorkspace, cwd string) []json.RawMessage {
	_, dir := sessionDir(w.root.Path(), cwd)
	env := session.DeveloperMessage(environmentOf(cfg, w, cwd, ModeAsk, envNow()).text())
	return append([]json.RawMessage{env}, agentsContext(w.root, dir)...)
}

// environmentChange is the turn's session's environment note when it differs from the last
// one its model was told (the mode was set, the day turned; a session
// stored before hearth told it has none), else "". Only the turn's
// goroutine calls it.
func (t *promptTurn) environmentChange() string {
	s := t.s
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	text := environmentOf(t.cfg, s.ws, s.cwd, mode, envNow()).text()
	if told, _ := s.conv.Told(environmentHeader); told == text {
		return ""
	}
	return text
}

// environment is what one note says; a value built for one prompt.
type environment struct {
	cwd, root  string
	passedOver string // why the repository around cwd is not the workspace, or ""
	mode       string
	network    string // Config.ShellNetwork
	now        time.Time
}

// environmentOf is the environment of a session working in cwd of w, in
// mode, now, under cfg.
func environmentOf(cfg Config, w *openWorkspace, cwd, mode string, now time.Time) environment {
	e := environment{cwd: cwd, root: w.root.Path(), mode: mode, network: cfg.ShellNetwork, now: now}
	if e.root == cwd {
		if _, why := workspaceRoot(cwd, cfg); why != "" {
			e.passedOver = why
		}
	}
	return e
}

// text is the note.
func (e environment) text() string {
	var b strings.Builder
	b.WriteString(environmentHeader)
	fmt.Fprintf(&b, "- Working directory: %s. Relative paths in tool calls start here; the shell runs here.\n", e.cwd)
	switch {
	case e.cwd != e.root:
		fmt.Fprintf(&b, "- Workspace: %s, the root of the git repository. The tools reach every file under it and nothing outside it. "+
			"hearth's notes of files changed on disk name them relative to it.\n", e.root)
	case e.passedOver != "":
		fmt.Fprintf(&b, "- Workspace: the working directory; %s. The tools reach nothing outside it.\n", e.passedOver)
	default:
		b.WriteString("- Workspace: the working directory. The tools reach every file under it and nothing outside it.\n")
	}
	fmt.Fprintf(&b, "- OS: %s.\n", osDescription())
	fmt.Fprintf(&b, "- Shell: the shell tool runs /bin/sh -c; the user's login shell is %s.\n", userShell())
	fmt.Fprintf(&b, "- Date: %s; time zone %s.\n", e.now.Format("2006-01-02 (Monday)"), timeZone(e.now))
	fmt.Fprintf(&b, "- Mode: %s. %s\n", e.mode, e.modeWords())
	return b.String()
}

// modeWords says what the mode lets run, in plain words: reads, edits and
// commands; then, where commands may run, their network and where they may
// write.
func (e environment) modeWords() string {
	var s string
	switch e.mode {
	case ModeReadOnly:
		return "Reads run; edits, commands and MCP tools that are not read-only are refused."
	case ModeAutoEdit:
		s = "Reads and edits run without asking; commands and MCP tools that are not read-only ask the user first."
	case ModeFullAuto:
		s = "Reads, edits, commands and MCP tools all run without asking."
	default:
		s = "Reads run; edits, commands and MCP tools that are not read-only ask the user first."
	}
	net := shellNetwork(e.network, e.mode)
	switch ok, _ := sandbox.NetworkEnforced(); {
	case !net.Off:
		s += " Commands have the network."
	case ok:
		s += " Commands have no network (no address is reachable, localhost included): a download or a service fails."
	default:
		s += " Commands should have no network, but this machine cannot take it from them."
	}
	if dirs := sandbox.CommandWrites(e.root); dirs != nil {
		s += " Commands may write only in " + strings.Join(dirs, ", ") + "."
	} else {
		s += " Commands are not sandboxed: they may write wherever the user can."
	}
	return s
}

// osDescription is runtime.GOOS, with the distribution and kernel where
// they can be read cheaply (Linux); read once per process.
var osDescription = sync.OnceValue(func() string {
	var parts []string
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
				parts = append(parts, strings.Trim(v, `"'`))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		parts = append(parts, "kernel "+strings.TrimSpace(string(b)))
	}
	if len(parts) == 0 {
		return runtime.GOOS
	}
	return runtime.GOOS + " (" + strings.Join(parts, ", ") + ")"
})

// userShell is the daemon's $SHELL, else /bin/sh.
func userShell() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	return "/bin/sh"
}

// timeZone names the local time zone at t: its IANA name when known ($TZ,
// the /etc/localtime link), then its offset from UTC.
func timeZone(t time.Time) string {
	name := strings.TrimPrefix(os.Getenv("TZ"), ":")
	if name == "" || filepath.IsAbs(name) {
		if link, err := os.Readlink("/etc/localtime"); err == nil {
			if _, after, ok := strings.Cut(link, "zoneinfo/"); ok {
				name = after
			}
		}
	}
	if name == "" && t.Location().String() != "Local" {
		name = t.Location().String()
	}
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	utc := fmt.Sprintf("UTC%c%02d:%02d", sign, off/3600, off%3600/60)
	if name == "" {
		return utc
	}
	return name + " (" + utc + ")"
}
