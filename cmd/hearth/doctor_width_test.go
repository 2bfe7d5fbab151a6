package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// doctor's lines fit an 80-column terminal: long details wrap with a
// hanging indent, and nothing is lost (joined back, the lines say what the
// JSON says). Both a healthy simulator set-up and one where every check
// has something to say, with its long advice and paths.
func TestDoctorFits80Columns(t *testing.T) {
	for _, broken := range []bool{false, true} {
		dir := isolate(t)
		if broken {
			t.Setenv("OPENAI_BASE_URL", "http//no-scheme.example")
			if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(dir, "data"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, "data", "hearth.db"), bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"doctor"}, &stdout, &stderr)
		for _, l := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("a line of %d columns:\n%s", n, l)
			}
		}
		var js bytes.Buffer
		run(context.Background(), []string{"doctor", "--json"}, &js, &stderr)
		// A path too long for a line is shown from "~".
		joined := strings.ReplaceAll(unwrapDoctor(stdout.String()), "~/", dir+"/")
		for _, c := range decodeChecks(t, js.Bytes()) {
			if !hasLine(joined, c.Status, c.Check, c.Detail) {
				t.Errorf("%s %s %q is lost:\n%s", c.Status, c.Check, c.Detail, stdout.String())
			}
		}
	}
}
