package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// isolate points every path hearth reads at a fresh temp directory.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "share"))
	t.Setenv("HEARTH_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("HEARTH_SOCKET", filepath.Join(dir, "run", "hearth.sock"))
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	return dir
}

func TestDoctorNamesEveryProblem(t *testing.T) {
	dir := isolate(t)
	t.Setenv("OPENAI_BASE_URL", "http//no-scheme.example")             // bad base URL, and no key for it
	if err := os.Mkdir(filepath.Join(dir, "run"), 0o777); err != nil { // world-writable socket dir
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "run"), 0o777)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil { // world-readable data dir
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "data"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "data", "hearth.db"), bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	out := unwrapDoctor(stdout.String())
	for _, want := range []struct{ status, check, detail string }{
		{"fail", "api key", "OPENAI_BASE_URL is set but no OPENAI_API_KEY"},
		{"fail", "base url", `OPENAI_BASE_URL="http//no-scheme.example" is not an http(s) URL`},
		{"fail", "socket", "socket directory " + filepath.Join(dir, "run") + " is mode 0777: others can replace the socket; remove their write access (chmod go-w " + filepath.Join(dir, "run") + ")"},
		{"warn", "data dir", filepath.Join(dir, "data") + " is mode 0755: other users can read hearth's data; chmod 700 " + filepath.Join(dir, "data")},
		{"fail", "database", "hearth.db is damaged (file is not a database); move it aside: mv " + filepath.Join(dir, "data", "hearth.db") + " " + filepath.Join(dir, "data", "hearth.db.corrupt")},
		{"warn", "daemon", "not running"},
	} {
		re := regexp.MustCompile(`(?m)^` + want.status + ` +` + want.check + ` +.*` + regexp.QuoteMeta(want.detail))
		if !re.MatchString(out) {
			t.Errorf("doctor output lacks %s %s ...%s:\n%s", want.status, want.check, want.detail, out)
		}
	}

	stdout.Reset()
	if code := run(context.Background(), []string{"doctor", "--json"}, &stdout, &stderr); code != 1 {
		t.Fatalf("--json: exit %d", code)
	}
	var checks []check
	if err := json.Unmarshal(stdout.Bytes(), &checks); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	failed := map[string]bool{}
	for _, c := range checks {
		if c.Status == "fail" {
			failed[c.Check] = true
		}
	}
	for _, name := range []string{"api key", "base url", "socket", "database"} {
		if !failed[name] {
			t.Errorf("--json: %q did not fail: %+v", name, checks)
		}
	}
}

func TestDoctorHealthySimulator(t *testing.T) {
	isolate(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor"}, &stdout, &stderr)
	if code != 0 || strings.Contains(stdout.String(), "fail") {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if out := unwrapDoctor(stdout.String()); !strings.Contains(out, "simulator mode") || !strings.Contains(out, "run `hearth login`") {
		t.Errorf("no simulator mode line naming hearth login:\n%s", stdout.String())
	}
}

// A socket directory others can only read or traverse (a 0755 $HOME) is
// fine, and doctor says so instead of asking to chmod it; a private data
// dir passes.
func TestDoctorAcceptsReadableSocketDirectory(t *testing.T) {
	dir := isolate(t)
	t.Setenv("HEARTH_SOCKET", filepath.Join(dir, "hearth.sock")) // directly in "$HOME"
	os.Chmod(dir, 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"doctor"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, re := range []string{`(?m)^ok +socket +`, `(?m)^ok +data dir +.*0700`} {
		if !regexp.MustCompile(re).MatchString(unwrapDoctor(stdout.String())) {
			t.Errorf("doctor output lacks %s:\n%s", re, stdout.String())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("doctor changed %s to %v", dir, fi.Mode().Perm())
	}
}

// Credentials in OPENAI_BASE_URL (a proxy's user:password, a key in the
// query) never reach doctor's output, whether the URL parses or not.
func TestDoctorRedactsBaseURL(t *testing.T) {
	for _, base := range []string{
		"http://bob:hunter2@127.0.0.1:1/v1?api_key=zzzsecret",
		"http://bob:hunter2@127.0.0.1:notaport/v1?api_key=zzzsecret",
		"ftp://bob:hunter2@127.0.0.1/v1?api_key=zzzsecret",
	} {
		isolate(t)
		t.Setenv("OPENAI_BASE_URL", base)
		t.Setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"doctor"}, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if !strings.Contains(out, "127.0.0.1") {
			t.Errorf("%s: doctor does not show the host:\n%s", base, out)
		}
		for _, secret := range []string{"bob", "hunter2", "zzzsecret"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: doctor output shows %q:\n%s", base, secret, out)
			}
		}
	}
}

// doctorRun runs `hearth doctor` in e's environment (plus env) and
// returns its exit code and output.
func doctorRun(t *testing.T, e *e2eEnv, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, "doctor")
	cmd.Env = append(append([]string(nil), e.env...), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), unwrapDoctor(string(out))
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, unwrapDoctor(string(out))
}

// hasLine says whether doctor's output (wrapped or not) has a line of
// that status and check whose detail holds detail.
func hasLine(out, status, check, detail string) bool {
	return regexp.MustCompile(`(?m)^` + status + ` +` + regexp.QuoteMeta(check) + ` +.*` + regexp.QuoteMeta(detail)).MatchString(unwrapDoctor(out))
}

// unwrapDoctor joins each check's wrapped lines back into one.
func unwrapDoctor(out string) string {
	return strings.ReplaceAll(out, "\n"+strings.Repeat(" ", doctorIndent), " ")
}

func decodeChecks(t *testing.T, b []byte) []check {
	t.Helper()
	var checks []check
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("--json: %v\n%s", err, b)
	}
	return checks
}

// doctor reports what the running daemon uses, warns where the shell
// differs (never showing a key), and has the daemon probe its model API:
// a key the API refuses fails.
func TestDoctorAsksTheRunningDaemon(t *testing.T) {
	e := newE2E(t)
	e.serve()
	code, out := doctorRun(t, e)
	if !hasLine(out, "ok", "daemon config", "uses http://127.0.0.1:") || !hasLine(out, "ok", "model api", "from the daemon: ws://127.0.0.1:") ||
		!strings.Contains(out, "key accepted") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	_, out = doctorRun(t, e, "OPENAI_API_KEY=sk-shell-other-key-1", "HEARTH_MODEL=shell-model")
	if !hasLine(out, "warn", "daemon config", "its model is sim-model, this shell's HEARTH_MODEL gives shell-model") ||
		!hasLine(out, "warn", "daemon config", "started with other settings than this shell's: ") ||
		!strings.Contains(out, "its API key is not this shell's OPENAI_API_KEY") {
		t.Errorf("a shell unlike the daemon:\n%s", out)
	}
	if strings.Contains(out, "sk-shell-other-key-1") || strings.Contains(out, "sk-e2e") {
		t.Errorf("a key is shown:\n%s", out)
	}
}

// A daemon in simulator mode is not said to have had its key accepted: it
// has none.
func TestDoctorSimulatorDaemonHasNoKey(t *testing.T) {
	e := newE2E(t)
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	e.env = env
	e.serve()
	_, out := doctorRun(t, e)
	if !hasLine(out, "ok", "daemon config", "uses the built-in simulator") ||
		!hasLine(out, "ok", "model api", "the built-in simulator answers (it needs no key)") || strings.Contains(out, "key accepted") {
		t.Errorf("doctor of a simulator daemon:\n%s", out)
	}
}

func TestDoctorDaemonWithRejectedKey(t *testing.T) {
	e := newE2E(t)
	e.env = append(e.env, "OPENAI_API_KEY=sk-the-wrong-key-00") // the last one wins
	e.serve()
	code, out := doctorRun(t, e)
	if code != 1 || !hasLine(out, "fail", "model api", "refused the API key (HTTP 401): set a valid OPENAI_API_KEY") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// Without a daemon doctor probes the shell's base URL itself: one nobody
// listens on fails (it resolved, so the base url check alone said ok).
func TestDoctorProbesWithoutDaemon(t *testing.T) {
	e := newE2E(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	code, out := doctorRun(t, e, "OPENAI_BASE_URL="+dead)
	if code != 1 || !hasLine(out, "fail", "model api", "cannot be reached") || !hasLine(out, "warn", "daemon", "not running") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out = doctorRun(t, e)
	if !hasLine(out, "ok", "model api", "key accepted") {
		t.Errorf("the simulator as the API: exit %d:\n%s", code, out)
	}
}

// TestDoctorNetwork: doctor says what HEARTH_SHELL_NETWORK gives each mode
// and whether this machine can take the network away — with what it does
// not cover — or warns that it cannot; a bad value is refused by name.
func TestDoctorNetwork(t *testing.T) {
	isolate(t)
	network := func() check {
		t.Helper()
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"doctor", "--json"}, &stdout, &stderr)
		var checks []check
		if err := json.Unmarshal(stdout.Bytes(), &checks); err != nil {
			t.Fatalf("--json: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		for _, c := range checks {
			if c.Check == "network" {
				return c
			}
		}
		t.Fatalf("no network check: %+v", checks)
		return check{}
	}
	c := network()
	const modes = "HEARTH_SHELL_NETWORK=mode: commands have no network in read-only and full-auto, the network in ask and auto-edit"
	if status := sandbox.NetworkStatus(); strings.HasPrefix(status, "cannot restrict the network: ") {
		if c.Status != "warn" || c.Detail != modes+", but "+status {
			t.Errorf("where the network cannot be restricted (%s): %+v", status, c)
		}
	} else if c.Status != "ok" || !strings.HasPrefix(c.Detail, modes+"; ") ||
		!strings.Contains(c.Detail, "where the network is off, commands") || !strings.Contains(c.Detail, "not covered: ") {
		t.Errorf("network check: %+v", c)
	}

	t.Setenv("HEARTH_SHELL_NETWORK", "on")
	if c := network(); c.Status != "ok" || c.Detail != "HEARTH_SHELL_NETWORK=on: commands have the network in every mode" {
		t.Errorf("HEARTH_SHELL_NETWORK=on: %+v", c)
	}
	t.Setenv("HEARTH_SHELL_NETWORK", "sometimes")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"doctor"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), `HEARTH_SHELL_NETWORK="sometimes": want on, off or mode`) {
		t.Errorf("HEARTH_SHELL_NETWORK=sometimes: exit %d, %s%s", code, stdout.String(), stderr.String())
	}
}

// With HEARTH_SIMULATOR=off and no key, doctor says the editors will be
// asked to log in and how, instead of promising the simulator.
func TestDoctorSimulatorOffWithoutKey(t *testing.T) {
	isolate(t)
	t.Setenv("HEARTH_SIMULATOR", "off")
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"doctor"}, &stdout, &stderr)
	out := unwrapDoctor(stdout.String())
	if !regexp.MustCompile(`(?m)^fail +api key +none, and HEARTH_SIMULATOR=off: .*hearth login`).MatchString(out) || strings.Contains(out, "built-in simulator") {
		t.Errorf("doctor:\n%s%s", out, stderr.String())
	}
}
