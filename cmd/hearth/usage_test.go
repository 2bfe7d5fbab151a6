package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runCLI runs the CLI in process and returns its exit code and output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// compareGolden compares got with testdata/DIR/NAME.golden (-update
// rewrites it).
func compareGolden(t *testing.T, dir, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", dir, name+".golden")
	if *updateHelp {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update creates it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// `hearth help CMD` is `hearth CMD --help`, for every command; help for an
// unknown command is refused with the list of commands.
func TestHelpCommand(t *testing.T) {
	for _, c := range commands {
		code, out, errOut := runCLI("help", c.name)
		_, want, _ := runCLI(c.name, "--help")
		if code != 0 || errOut != "" || out != want {
			t.Errorf("hearth help %s: exit %d, stderr %q, stdout\n%s\nwant (as %s --help)\n%s", c.name, code, errOut, out, c.name, want)
		}
		if !strings.HasPrefix(out, "Usage: hearth "+c.usage+"\n") {
			t.Errorf("hearth help %s starts %q", c.name, out)
		}
	}
	code, out, errOut := runCLI("help", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, `unknown command "nosuch"`) || !strings.Contains(errOut, "hearth inspect") {
		t.Errorf("hearth help nosuch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// --version, -v and version print the version and nothing else.
func TestVersionFlags(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 || out != "hearth "+version+"\n" || errOut != "" {
			t.Errorf("hearth %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// oneDash finds a flag of more than one letter listed as -name.
var oneDash = regexp.MustCompile(`(?m)^  -[^-\s]{2,}`)

// A bad flag, a flag without its value or a bad value: exit 2, the mistake
// said once (with the flag spelled --name), then the command's usage; the
// flag package prints nothing of its own. Every command of the table.
func TestBadFlagSaidOnce(t *testing.T) {
	for _, c := range commands {
		code, out, errOut := runCLI(c.name, "--no-such-flag")
		if code != 2 || out != "" {
			t.Errorf("hearth %s --no-such-flag: exit %d, stdout %q", c.name, code, out)
		}
		if n := strings.Count(errOut, "no-such-flag"); n != 1 || !strings.HasPrefix(errOut, "hearth "+c.name+": unknown flag --no-such-flag\n") {
			t.Errorf("hearth %s --no-such-flag: the mistake is said %d times:\n%s", c.name, n, errOut)
		}
		if !strings.Contains(errOut, "\nUsage: hearth "+c.usage+"\n") || strings.Contains(errOut, "Usage of") {
			t.Errorf("hearth %s --no-such-flag: no usage, or the flag package's:\n%s", c.name, errOut)
		}
		if oneDash.MatchString(errOut) {
			t.Errorf("hearth %s: a flag spelled with one dash:\n%s", c.name, errOut)
		}
	}
	for name, args := range map[string][]string{
		"status-bad-flag":   {"status", "--bogus"},
		"inspect-no-value":  {"inspect", "--limit"},
		"inspect-bad-value": {"inspect", "--limit", "many"},
		"logs-bad-bool":     {"logs", "-f=maybe"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(args...)
			if code != 2 || out != "" {
				t.Errorf("hearth %v: exit %d, stdout %q", args, code, out)
			}
			compareGolden(t, "usage", name, errOut)
		})
	}
}

// Commands that take no arguments refuse them, naming them; inspect takes
// one SESSION, service one word.
func TestExtraArgumentsRefused(t *testing.T) {
	for _, c := range commands {
		if c.maxArgs != 0 {
			continue
		}
		code, out, errOut := runCLI(c.name, "extra", "words")
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "hearth "+c.name+": "+c.name+` takes no arguments; remove "extra" "words"`) ||
			!strings.Contains(errOut, "Usage: hearth "+c.usage) {
			t.Errorf("hearth %s extra words: exit %d, stdout %q, stderr %q", c.name, code, out, errOut)
		}
	}
	for name, args := range map[string][]string{
		"inspect-two-sessions": {"inspect", "ses_a", "ses_b", "--json"},
		"service-status-extra": {"service", "status", "now"},
		"acp-extra":            {"acp", "--", "x"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(args...)
			if code != 2 || out != "" {
				t.Errorf("hearth %v: exit %d, stdout %q", args, code, out)
			}
			compareGolden(t, "usage", name, errOut)
		})
	}
}
