package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hearthd/hearth/installer"
)

func TestInstallDryRunWritesNothing(t *testing.T) {
	dir := isolate(t)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"install", "--dry-run"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if runtime.GOOS == "linux" {
		unit := filepath.Join(dir, ".config", "systemd", "user", "hearth.service")
		for _, want := range []string{"==> " + unit + ": would be created (mode 0644) <==", "WantedBy=default.target", "EnvironmentFile=-%h/.config/hearth/env"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("dry run lacks %q:\n%s", want, stdout.String())
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == ".config" || e.Name() == "Library" {
			t.Errorf("dry run created %s", e.Name())
		}
	}
	// The test binary lives in a temp dir: a real install refuses it.
	if code := run(context.Background(), []string{"install"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "temporary build") {
		t.Errorf("install from a temp binary: exit %d, stderr %q", code, stderr.String())
	}
}

// TestServiceControlWithoutUserManager: without a systemd user manager (as in
// this container: systemctl --user fails to reach a bus), start, stop and
// service status exit non-zero with the reason instead of hanging.
func TestServiceControlWithoutUserManager(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("linux only")
		return
	}
	dir := isolate(t)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"start"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "not installed") {
		t.Errorf("start before install: exit %d, stderr %q", code, stderr.String())
	}
	p, err := installer.NewPlan("linux", installer.Spec{Binary: "/usr/bin/hearth", Home: dir, Socket: "/s", DataDir: "/d"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"start"}, {"stop"}, {"restart"}, {"service", "status"}} {
		stdout.Reset()
		stderr.Reset()
		code := run(context.Background(), args, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "No medium found") || !strings.Contains(stderr.String(), "hearth serve") {
			t.Errorf("hearth %v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), p.Unit.Path) || !strings.Contains(stdout.String(), "yes") {
		t.Errorf("service status table: %q", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"uninstall"}, &stdout, &stderr); code != 0 {
		t.Errorf("uninstall: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(p.Unit.Path); !os.IsNotExist(err) {
		t.Errorf("unit still there after uninstall: %v", err)
	}
	// The env template was never edited: it goes too, and says so.
	if !strings.Contains(stdout.String(), "removed "+p.Env.Path) || strings.Contains(stdout.String(), "kept ") {
		t.Errorf("uninstall output: %q", stdout.String())
	}
}
