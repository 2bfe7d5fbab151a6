package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
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

// A session's model is told where and how it works in the shapes its
// family was trained on. The environment is a user message
// <environment_context> of elements: cwd, shell, current_date, timezone,
// then what hearth knows besides (the workspace root, the directories
// commands may write, the OS). The mode — what runs, what asks, what is
// refused, the commands' network, and how to check the work under it —
// is a developer message <permissions instructions> of its own
// (policy_note.go), so that a mode change is one new message and nothing
// else. Both are in the session's initial items, so the warm-up carries
// them, with the AGENTS.md files (agents.go). Before each prompt the
// daemon builds each again; one that differs from the last the model was
// told (the mode was set, the day turned) goes before the user's message.
// Nothing earlier is rewritten, so the request stays incremental; the last
// one told is read from the transcript (session.Conversation.Told), so a
// restart or a compaction does not lose track of it, and a session stored
// before these framings gets both at its next prompt.

// The framings' first and last lines (Told finds them by the first).
const (
	environmentOpen  = "<environment_context>"
	environmentClose = "</environment_context>"
)

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
// under cfg begins with, before its warm-up: its permissions (in ask, the
// mode of a new session), the AGENTS.md files that apply there
// (agents.go), then its environment. A spare is handed out only to a
// session/new whose initial context is the spare's.
func initialContext(cfg Config, w *openWorkspace, cwd string) []json.RawMessage {
	_, dir := sessionDir(w.root.Path(), cwd)
	out := []json.RawMessage{session.DeveloperMessage(policyOf(cfg, w.root.Path(), ModeAsk).text())}
	out = append(out, agentsContext(w.root, dir, cwd)...)
	return append(out, session.UserMessage(environmentOf(cfg, w, cwd, envNow()).text()))
}

// contextChanges are the turn's session's permissions and environment
// when they differ from the last ones its model was told (the mode was
// set, the day turned; a session stored before hearth told them has
// none), as the items that tell them; nil when nothing changed. Only the
// turn's goroutine calls it.
func (t *promptTurn) contextChanges() []json.RawMessage {
	s := t.s
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	var out []json.RawMessage
	if text := policyOf(t.cfg, s.ws.root.Path(), mode).text(); !toldAlready(s.conv, policyOpen, text) {
		out = append(out, session.DeveloperMessage(text))
	}
	if text := environmentOf(t.cfg, s.ws, s.cwd, envNow()).text(); !toldAlready(s.conv, environmentOpen, text) {
		out = append(out, session.UserMessage(text))
	}
	return out
}

// environment is what one <environment_context> says; a value built for
// one prompt.
type environment struct {
	cwd, root  string
	passedOver string // why the repository around cwd is not the workspace, or ""
	now        time.Time
}

// environmentOf is the environment of a session working in cwd of w, now,
// under cfg.
func environmentOf(cfg Config, w *openWorkspace, cwd string, now time.Time) environment {
	e := environment{cwd: cwd, root: w.root.Path(), now: now}
	if e.root == cwd {
		if _, why := workspaceRoot(cwd, cfg); why != "" {
			e.passedOver = why
		}
	}
	return e
}

// text is the message: the elements the families know, in their order
// and layout (two spaces of indent, one element a line), then hearth's.
func (e environment) text() string {
	var b strings.Builder
	b.WriteString(environmentOpen + "\n")
	element(&b, "cwd", e.cwd)
	element(&b, "shell", filepath.Base(userShell()))
	element(&b, "current_date", e.now.Format("2006-01-02"))
	element(&b, "timezone", timeZone(e.now))
	switch {
	case e.passedOver != "":
		element(&b, "workspace_root", e.root+" (the working directory; "+e.passedOver+")")
	default:
		element(&b, "workspace_root", e.root)
	}
	if dirs := sandbox.CommandWrites(e.root); dirs != nil {
		b.WriteString("  <writable_roots>\n")
		for _, d := range dirs {
			b.WriteString("    <root>" + xmlText(d) + "</root>\n")
		}
		b.WriteString("  </writable_roots>\n")
	}
	element(&b, "os", osDescription())
	b.WriteString(environmentClose)
	return b.String()
}

// element writes one element of the environment on its own line.
func element(b *strings.Builder, name, value string) {
	b.WriteString("  <" + name + ">" + xmlText(value) + "</" + name + ">\n")
}

// xmlText escapes what would end an element early (a path may hold < or &).
func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
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
// the /etc/localtime link), as the families were shown it, else its offset
// from UTC.
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
	if name != "" {
		return name
	}
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, off/3600, off%3600/60)
}
