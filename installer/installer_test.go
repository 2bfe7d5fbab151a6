package installer

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var fixed = Spec{
	Binary:  "/opt/hearth/bin/hearth",
	Home:    "/home/ada",
	Socket:  "/run/user/1000/hearth/hearth.sock",
	DataDir: "/home/ada/.local/share/hearth",
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the generated text:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestSystemdUnitGolden(t *testing.T) {
	unit := SystemdUnit(fixed)
	golden(t, "hearth.service.golden", unit)
	for _, line := range []string{
		"ExecStart=/opt/hearth/bin/hearth serve",
		"Environment=HEARTH_DATA_DIR=/home/ada/.local/share/hearth HEARTH_SOCKET=/run/user/1000/hearth/hearth.sock",
		"EnvironmentFile=-%h/.config/hearth/env",
		"Restart=on-failure", "RestartSec=2", "WantedBy=default.target",
	} {
		if !slices.Contains(strings.Split(unit, "\n"), line) {
			t.Errorf("unit lacks the line %q", line)
		}
	}
	if strings.Contains(unit, "{{") {
		t.Error("unit holds {{: kardianos/service would expand it as a template")
	}
}

func TestLaunchdPlistGolden(t *testing.T) {
	golden(t, "hearth.plist.golden", LaunchdPlist(fixed))
}

func TestQuoting(t *testing.T) {
	s := fixed
	s.Binary = "/Users/Ada Lovelace/bin/hearth"
	s.DataDir = `/data/100%"x"`
	unit := SystemdUnit(s)
	for _, want := range []string{
		`ExecStart="/Users/Ada Lovelace/bin/hearth" serve`,
		`Environment="HEARTH_DATA_DIR=/data/100%%\"x\"" HEARTH_SOCKET=`,
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	plist := LaunchdPlist(Spec{Binary: "/a&b/<h>", DataDir: "/d"})
	if !strings.Contains(plist, "<string>/a&amp;b/&lt;h&gt;</string>") {
		t.Errorf("plist does not escape the binary path:\n%s", plist)
	}
}

// TestSystemdAnalyzeVerify runs systemd's own checker on the generated unit.
// systemd-analyze ships with Debian's systemd package; the test installs it
// when missing.
func TestSystemdAnalyzeVerify(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("systemd units are only verified on linux; the golden test above still ran")
		return
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		out, err := exec.Command("sh", "-c", "apt-get install -y systemd || (apt-get update && apt-get install -y systemd)").CombinedOutput()
		if err != nil {
			t.Fatalf("systemd-analyze is missing and installing Debian's systemd failed: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hearth")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := fixed
	s.Binary = bin
	s.Home = dir
	unit := filepath.Join(dir, "hearth.service")
	if err := os.WriteFile(unit, []byte(SystemdUnit(s)), 0o644); err != nil {
		t.Fatal(err)
	}
	// --man=no: no man pages here; without a user manager, verify the unit
	// as a system unit file: the syntax checks are the same.
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func TestLoadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	text := EnvTemplate + "\nOPENAI_API_KEY=sk-test\n  OPENAI_BASE_URL = \"http://localhost:1/v1\" \n; comment\nHEARTH_MODEL='m x'\nEMPTY=\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := LoadEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://localhost:1/v1", "HEARTH_MODEL": "m x", "EMPTY": ""}
	if len(env) != len(want) {
		t.Errorf("got %v, want %v", env, want)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if err := os.WriteFile(path, []byte("# fine\nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEnvFile(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("bad line: err = %v, want one naming line 2", err)
	}
	if _, err := LoadEnvFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
}

// tree lists every path under root with its mode and content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		v := info.Mode().String()
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInstallUninstallLeavesNothingBehind(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".config", "other"), 0o755)
			os.WriteFile(filepath.Join(home, ".config", "other", "x"), []byte("x"), 0o644)
			os.Mkdir(filepath.Join(home, "Library"), 0o700) // always there on macOS
			s := Spec{Binary: "/usr/bin/hearth", Home: home, Socket: filepath.Join(home, "s.sock"), DataDir: filepath.Join(home, "data")}
			p, err := NewPlan(goos, s)
			if err != nil {
				t.Fatal(err)
			}
			before := tree(t, home)

			var dry bytes.Buffer
			p.DryRun(&dry)
			if got := tree(t, home); !mapsEqual(got, before) {
				t.Fatalf("dry run wrote files: %v", got)
			}
			for _, want := range []string{"==> " + p.Unit.Path + ": would be created (mode 0644) <==", p.Unit.Content, "==> " + p.Env.Path + ": would be created (mode 0600) <==", EnvTemplate} {
				if !strings.Contains(dry.String(), want) {
					t.Errorf("dry run lacks %q:\n%s", want, dry.String())
				}
			}

			wrote, err := p.Apply()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(wrote, []string{p.Unit.Path, p.Env.Path}) {
				t.Errorf("wrote %v", wrote)
			}
			assertMode(t, p.Env.Path, 0o600)
			assertMode(t, filepath.Dir(p.Env.Path), 0o700|fs.ModeDir)
			assertMode(t, p.Unit.Path, 0o644)
			if b, _ := os.ReadFile(p.Unit.Path); string(b) != p.Unit.Content {
				t.Errorf("unit on disk differs from the plan")
			}

			// The user adds a key; install again changes nothing.
			if err := os.WriteFile(p.Env.Path, []byte("OPENAI_API_KEY=sk-mine\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			installed := tree(t, home)
			if wrote, err := p.Apply(); err != nil || len(wrote) != 0 {
				t.Errorf("second install wrote %v, %v", wrote, err)
			}
			if !mapsEqual(tree(t, home), installed) {
				t.Errorf("second install changed files")
			}
			if strings.Contains(p.Unit.Content, "sk-mine") {
				t.Error("the key reached the unit")
			}
			dry.Reset()
			p.DryRun(&dry)
			if !strings.Contains(dry.String(), ": up to date, unchanged <==") || !strings.Contains(dry.String(), ": exists, left as it is <==") {
				t.Errorf("dry run after install:\n%s", dry.String())
			}

			// A moved binary: install replaces the unit.
			s2 := s
			s2.Binary = "/usr/local/bin/hearth"
			p2, _ := NewPlan(goos, s2)
			if wrote, err := p2.Apply(); err != nil || !slices.Equal(wrote, []string{p2.Unit.Path}) {
				t.Errorf("install after a move wrote %v, %v", wrote, err)
			}

			if _, err := p.Remove(); err != nil {
				t.Fatal(err)
			}
			after := tree(t, home)
			// Exactly the env file (and its directories) remain.
			want := maps(before)
			for _, k := range []string{".config/hearth", ".config/hearth/env"} {
				want[k] = installed[k]
			}
			if !mapsEqual(after, want) {
				t.Errorf("after uninstall:\n got %v\nwant %v", after, want)
			}
			if _, err := p.Remove(); err != nil {
				t.Errorf("second uninstall: %v", err)
			}

			// Installed and removed without the user touching the env
			// template: nothing at all is left behind.
			os.Remove(p.Env.Path)
			os.Remove(filepath.Dir(p.Env.Path))
			if _, err := p.Apply(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Remove(); err != nil {
				t.Fatal(err)
			}
			if got := tree(t, home); !mapsEqual(got, before) {
				t.Errorf("install → uninstall left:\n got %v\nwant %v", got, before)
			}
		})
	}
}

func TestUnsupported(t *testing.T) {
	_, err := NewPlan("windows", fixed)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "hearth serve") {
		t.Errorf("windows: %v", err)
	}
	if err := Check(context.Background(), "plan9"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Check(plan9) = %v", err)
	}
}

// TestCheckWithoutUserManager: where systemctl exists but no user manager
// answers (this container), Check says so at once instead of hanging; with a
// systemctl that is not there at all, it says that.
func TestCheckWithoutUserManager(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("linux only")
		return
	}
	dir := t.TempDir()
	// A systemctl that fails the way it does without a user bus.
	fake := filepath.Join(dir, "systemctl")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"), 0o755)
	t.Setenv("PATH", dir)
	err := Check(context.Background(), "linux")
	if err == nil || !strings.Contains(err.Error(), "No medium found") || !strings.Contains(err.Error(), "hearth serve") {
		t.Errorf("Check with a failing systemctl = %v", err)
	}
	if _, err := NewManager(context.Background(), Plan{GOOS: "linux"}); err == nil {
		t.Error("NewManager succeeded without a user manager")
	}
	t.Setenv("PATH", t.TempDir())
	if err := Check(context.Background(), "linux"); err == nil || !strings.Contains(err.Error(), "systemctl not found") {
		t.Errorf("Check without systemctl = %v", err)
	}
}

func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode() & (fs.ModePerm | fs.ModeDir); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

func maps(m map[string]string) map[string]string {
	c := map[string]string{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The unit goes under $XDG_CONFIG_HOME/systemd/user when it is set to an
// absolute path (where systemd looks first), else under ~/.config.
func TestUnitPathFollowsXDGConfigHome(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	spec, err := SpecFor("/s", "/d", "/opt/hearth/bin/hearth")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := spec.SystemdUnitPath(), filepath.Join(cfg, "systemd", "user", "hearth.service"); got != want {
		t.Errorf("unit path with XDG_CONFIG_HOME=%s: %s, want %s", cfg, got, want)
	}
	for _, v := range []string{"", "relative/dir"} {
		t.Setenv("XDG_CONFIG_HOME", v)
		spec, err := SpecFor("", "", "/opt/hearth/bin/hearth")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := spec.SystemdUnitPath(), filepath.Join(spec.Home, ".config", "systemd", "user", "hearth.service"); got != want {
			t.Errorf("unit path with XDG_CONFIG_HOME=%q: %s, want %s", v, got, want)
		}
	}
}

// SetEnvVar replaces the key's line (dropping repeats) and keeps the rest;
// it creates a missing file from the template, 0600 in a 0700 directory,
// and makes an existing file 0600. UnsetEnvVar removes the key's lines.
func TestSetAndUnsetEnvVar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", "hearth", "env")
	if err := SetEnvVar(path, "OPENAI_API_KEY", "sk-one"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if env, err := LoadEnvFile(path); err != nil || env["OPENAI_API_KEY"] != "sk-one" || len(env) != 1 {
		t.Fatalf("after set: %v %v", env, err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), EnvTemplate) {
		t.Errorf("a new file does not start with the template:\n%s", b)
	}

	os.WriteFile(path, []byte("# mine\nOPENAI_BASE_URL=http://x/v1\nOPENAI_API_KEY=old\nHEARTH_MODEL=m\n OPENAI_API_KEY = older\nlast=1"), 0o644)
	if err := SetEnvVar(path, "OPENAI_API_KEY", "sk-two"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "# mine\nOPENAI_BASE_URL=http://x/v1\nOPENAI_API_KEY=sk-two\nHEARTH_MODEL=m\nlast=1\n"; string(b) != want {
		t.Errorf("after replace:\n%s\nwant:\n%s", b, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after replace", fi.Mode().Perm())
	}
	for _, bad := range []string{"", "two words", "sk\nX=1", `"q"`} {
		if err := SetEnvVar(path, "OPENAI_API_KEY", bad); err == nil {
			t.Errorf("value %q accepted", bad)
		}
	}

	if removed, err := UnsetEnvVar(path, "OPENAI_API_KEY"); err != nil || !removed {
		t.Fatalf("unset: %v %v", removed, err)
	}
	b, _ = os.ReadFile(path)
	if want := "# mine\nOPENAI_BASE_URL=http://x/v1\nHEARTH_MODEL=m\nlast=1\n"; string(b) != want {
		t.Errorf("after unset:\n%s\nwant:\n%s", b, want)
	}
	if removed, err := UnsetEnvVar(path, "OPENAI_API_KEY"); err != nil || removed {
		t.Errorf("second unset: %v %v", removed, err)
	}
	if removed, err := UnsetEnvVar(filepath.Join(dir, "none"), "OPENAI_API_KEY"); err != nil || removed {
		t.Errorf("unset in a missing file: %v %v", removed, err)
	}
}
