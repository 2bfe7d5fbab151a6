package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateHelp = flag.Bool("update", false, "rewrite cmd/hearth/testdata/help/*.golden")

// TestHelpGolden compares `hearth help` and `hearth CMD --help` for every
// command in the table with testdata/help/*.golden (go test -run
// TestHelpGolden -update rewrites them). --help exits 0 and prints to stdout.
func TestHelpGolden(t *testing.T) {
	cases := map[string][]string{"help": {"help"}}
	for _, c := range commands {
		cases[c.name] = []string{c.name, "--help"}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("hearth %v: exit %d, stderr %q", args, code, stderr.String())
			}
			if stderr.Len() != 0 {
				t.Errorf("hearth %v wrote to stderr: %q", args, stderr.String())
			}
			path := filepath.Join("testdata", "help", name+".golden")
			if *updateHelp {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestHelpGolden -update creates it)", err)
			}
			if stdout.String() != string(want) {
				t.Errorf("hearth %v differs from %s:\n--- got\n%s--- want\n%s", args, path, stdout.String(), want)
			}
		})
	}
	// -h and -help mean the same; help after "--" is an argument.
	for _, args := range [][]string{{"status", "-h"}, {"logs", "-help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 || stdout.Len() == 0 {
			t.Errorf("hearth %v: exit %d, stdout %q", args, code, stdout.String())
		}
	}
	if helpRequested([]string{"--", "--help"}) {
		t.Error(`"--help" after "--" taken as a help request`)
	}
}
