package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnsupported is returned for systems without a per-user service manager
// hearth knows (anything but linux and darwin).
var ErrUnsupported = errors.New("no per-user service manager supported on this system; run `hearth serve` instead (for example from your login session)")

// File is one file install writes.
type File struct {
	Path    string
	Mode    fs.FileMode
	Content string
	// Keep marks the env file: created only when missing, never overwritten
	// (the user puts the API key in it) and left in place by uninstall.
	Keep bool
}

// Plan is what install writes for one system, computed without touching
// the file system.
type Plan struct {
	GOOS string
	Spec Spec
	Unit File // the systemd unit or the launchd plist
	Env  File // ~/.config/hearth/env
}

// SpecFor builds the Spec of the current user: the binary's absolute path,
// the home directory, $XDG_CONFIG_HOME, and the daemon's socket and data
// directory as its configuration has them (the unit passes them on).
func SpecFor(socket, dataDir, binary string) (Spec, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Spec{}, fmt.Errorf("no home directory: %w", err)
	}
	if binary, err = filepath.Abs(binary); err != nil {
		return Spec{}, err
	}
	if r, err := filepath.EvalSymlinks(binary); err == nil {
		binary = r
	}
	return Spec{Binary: binary, Home: home, Socket: socket, DataDir: dataDir, ConfigHome: ConfigHome()}, nil
}

// NewPlan returns the files install writes on goos.
func NewPlan(goos string, s Spec) (Plan, error) {
	p := Plan{GOOS: goos, Spec: s, Env: File{Path: s.EnvFile(), Mode: 0o600, Content: EnvTemplate, Keep: true}}
	switch goos {
	case "linux":
		p.Unit = File{Path: s.SystemdUnitPath(), Mode: 0o644, Content: SystemdUnit(s)}
	case "darwin":
		p.Unit = File{Path: s.LaunchdPlistPath(), Mode: 0o644, Content: LaunchdPlist(s)}
	default:
		return p, fmt.Errorf("%s: %w", goos, ErrUnsupported)
	}
	return p, nil
}

// DryRun prints what Apply would do: each path, whether it would be
// written, and the full content it would hold. It reads the file system but
// writes nothing.
func (p Plan) DryRun(w io.Writer) {
	for _, f := range []File{p.Unit, p.Env} {
		old, err := os.ReadFile(f.Path)
		switch {
		case err == nil && f.Keep:
			fmt.Fprintf(w, "==> %s: exists, left as it is <==\n\n", f.Path)
			continue
		case err == nil && string(old) == f.Content:
			fmt.Fprintf(w, "==> %s: up to date, unchanged <==\n\n", f.Path)
			continue
		case err == nil:
			fmt.Fprintf(w, "==> %s: would be replaced (mode %04o) <==\n", f.Path, f.Mode)
		default:
			fmt.Fprintf(w, "==> %s: would be created (mode %04o) <==\n", f.Path, f.Mode)
		}
		io.WriteString(w, f.Content)
		fmt.Fprintln(w)
	}
}

// Apply writes the plan's files: the unit (replaced when its content
// differs, so a moved binary is picked up) and the env file (only when
// missing). Running it twice changes nothing the second time. It returns
// the paths it wrote.
func (p Plan) Apply() (wrote []string, err error) {
	for _, f := range []File{p.Unit, p.Env} {
		old, err := os.ReadFile(f.Path)
		if err == nil && (f.Keep || bytes.Equal(old, []byte(f.Content))) {
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return wrote, err
		}
		dirMode := fs.FileMode(0o755)
		if f.Keep {
			dirMode = 0o700
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), dirMode); err != nil {
			return wrote, err
		}
		if err := writeAtomic(f.Path, f.Content, f.Mode); err != nil {
			return wrote, err
		}
		wrote = append(wrote, f.Path)
	}
	return wrote, nil
}

// writeAtomic writes through a temporary file and a rename, so a crash
// never leaves half a unit, and the file never exists with a wider mode.
func writeAtomic(path, content string, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Remove deletes what Apply wrote: the unit file, the env file while it is
// still the untouched template (once the user has edited it, it holds their
// key and stays), then the directories left empty (up to, not including,
// ~/.config or ~/Library). It returns the paths it removed; files that are
// not there are not an error.
func (p Plan) Remove() (removed []string, err error) {
	if err := os.Remove(p.Unit.Path); err == nil {
		removed = append(removed, p.Unit.Path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if old, err := os.ReadFile(p.Env.Path); err == nil && string(old) == p.Env.Content {
		if err := os.Remove(p.Env.Path); err == nil {
			removed = append(removed, p.Env.Path)
		}
	}
	stop := map[string]bool{
		filepath.Join(p.Spec.Home, ".config"): true,
		filepath.Join(p.Spec.Home, "Library"): true,
		p.Spec.Home:                           true,
	}
	for _, f := range []string{p.Unit.Path, p.Env.Path} {
		for d := filepath.Dir(f); !stop[d] && strings.HasPrefix(d, p.Spec.Home+string(filepath.Separator)); d = filepath.Dir(d) {
			if os.Remove(d) != nil { // not empty (or not ours to judge): stop
				break
			}
			removed = append(removed, d)
		}
	}
	return removed, nil
}
