package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
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

// Only what `go run` and `go test` build is refused: the go command's
// scratch and cache directories, wherever they are; any other directory,
// /tmp included, holds a binary that stays.
func TestGoRunBuild(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	for bin, want := range map[string]bool{
		"/tmp/go-build3141592/b001/exe/hearth":                 true,
		"/var/folders/xy/T/go-build42/b001/exe/hearth":         true,
		"/home/ada/.cache/go-build/8f/8f3e-d/hearth":           true,
		filepath.Join(cache, "8f", "8f3e-d", "hearth"):         true,
		"/tmp/hearth-bin123/hearth":                            false,
		"/tmp/hearth":                                          false,
		"/home/ada/bin/hearth":                                 false,
		"/home/ada/go/bin/hearth":                              false,
		"/home/ada/src/go-builder/hearth":                      false,
		filepath.Join(filepath.Dir(cache), "elsewhere/hearth"): false,
	} {
		if got := goRunBuild(bin); got != want {
			t.Errorf("goRunBuild(%s) = %v, want %v", bin, got, want)
		}
	}
}

// `hearth install` from a binary built with `go build -o` into a temp
// directory installs it, the unit under $XDG_CONFIG_HOME/systemd/user; the
// same binary in a `go run` scratch directory is refused. systemctl is a
// stand-in (the user's own service manager is never asked); enabling may
// still fail after the files are written where kardianos/service sees no
// systemd (a container), which is not what this test is about.
func TestInstallGoBuildBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("linux only")
		return
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "fakebin")
	os.Mkdir(fake, 0o755)
	calls := filepath.Join(dir, "systemctl.calls")
	os.WriteFile(filepath.Join(fake, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\nexit 0\n"), 0o755)
	cfgHome := filepath.Join(dir, "xdg-config")
	env := append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_CONFIG_HOME="+cfgHome,
		"HEARTH_DATA_DIR="+filepath.Join(dir, "data"), "HEARTH_SOCKET="+filepath.Join(dir, "run", "hearth.sock"),
		"PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))

	cmd := exec.Command(binary, "install")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "the service file is in place but the service is not enabled") {
		t.Fatalf("install from %s: %v\n%s", binary, err, out)
	}
	unitPath := filepath.Join(cfgHome, "systemd", "user", "hearth.service")
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatalf("no unit under XDG_CONFIG_HOME: %v\n%s", err, out)
	}
	real, _ := filepath.EvalSymlinks(binary)
	if !strings.Contains(string(unit), "ExecStart="+real+" serve\n") {
		t.Errorf("unit does not run %s:\n%s", real, unit)
	}
	if _, err := os.Stat(filepath.Join(dir, "home", ".config", "systemd")); !os.IsNotExist(err) {
		t.Errorf("something was written under ~/.config/systemd too: %v", err)
	}
	if got, _ := os.ReadFile(calls); !strings.Contains(string(got), "--user") {
		t.Errorf("the stand-in systemctl was not asked: %q", got)
	}

	scratch := filepath.Join(dir, "go-build2718", "b001", "exe")
	os.MkdirAll(scratch, 0o755)
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(scratch, "hearth"), b, 0o755)
	cmd = exec.Command(filepath.Join(scratch, "hearth"), "install")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "temporary build of `go run` or `go test`") {
		t.Errorf("install from a go run scratch dir: %v\n%s", err, out)
	}
}
