package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	if err := os.Mkdir(filepath.Join(dir, "run"), 0o755); err != nil { // world-readable socket dir
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "run"), 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "hearth.db"), bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []struct{ status, check, detail string }{
		{"fail", "api key", "OPENAI_BASE_URL is set but no OPENAI_API_KEY"},
		{"fail", "base url", `OPENAI_BASE_URL="http//no-scheme.example" is not an http(s) URL`},
		{"fail", "socket", "directory " + filepath.Join(dir, "run") + " is mode 0755: others can reach the socket; chmod 700"},
		{"fail", "database", "file is not a database; move the file aside"},
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
	if !strings.Contains(stdout.String(), "simulator mode") {
		t.Errorf("no simulator mode line:\n%s", stdout.String())
	}
}
