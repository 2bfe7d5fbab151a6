package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A workspace puts a directory under the model's tools (read_file,
// list_dir, grep; the shell writes there) and under the watcher. Some
// directories must never be one: hearth's own (the env file with the API
// key, the database with every conversation, the socket through which a
// client acts as the user), the user's credentials, the system's, and the
// filesystem root or home directory, which hold everything (measured: /
// took 19 s, 109 MB and ~30k watches). A directory that holds one of them
// gives it away as well; where what is inside is secret, so does any
// directory inside.

// guardedDir is a directory refused as a workspace.
type guardedDir struct {
	path   string
	what   string // for "it is …", "it holds …"
	inside bool   // a directory inside it is refused too
	holds  bool   // a directory that holds it is refused too
}

// credentialDirs are where the user's keys and tokens live, relative to
// the home directory.
var credentialDirs = []string{".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store",
	".config/gcloud", ".config/gh", ".local/share/keyrings"}

// guardedDirs lists the directories refused for cfg's daemon.
func guardedDirs(cfg Config) []guardedDir {
	g := []guardedDir{
		{path: cfg.DataDir, what: "hearth's data directory (its database holds every conversation)", inside: true, holds: true},
		{path: filepath.Dir(cfg.Socket), what: "the directory of hearth's socket (whoever reaches it acts as you)", holds: true},
	}
	config := "hearth's configuration directory (its env file holds the API key)"
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		g = append(g, guardedDir{path: filepath.Join(x, "hearth"), what: config, inside: true, holds: true})
	}
	if home, err := os.UserHomeDir(); err == nil {
		g = append(g, guardedDir{path: filepath.Join(home, ".config", "hearth"), what: config, inside: true, holds: true},
			guardedDir{path: home, what: "your home directory", holds: true})
		for _, c := range credentialDirs {
			p := filepath.Join(home, c)
			g = append(g, guardedDir{path: p, what: "your credentials (~/" + c + ")", inside: true, holds: true})
		}
	}
	for _, p := range []string{"/proc", "/sys", "/dev"} {
		g = append(g, guardedDir{path: p, what: "a system directory", inside: true})
	}
	for _, p := range []string{"/etc", "/boot", "/run", "/var", "/usr"} {
		g = append(g, guardedDir{path: p, what: "a system directory"})
	}
	for _, p := range []string{os.TempDir(), "/tmp", "/var/tmp"} {
		g = append(g, guardedDir{path: p, what: "the temp directory (a project in it is fine)"})
	}
	return g
}

// refusedWorkspace says why dir (a canonical path: workspace.Open resolved
// it) cannot be a workspace of cfg's daemon, or "".
func refusedWorkspace(dir string, cfg Config) string {
	if dir == string(filepath.Separator) {
		return "it is the filesystem root"
	}
	guarded := guardedDirs(cfg)
	// What dir is says most; then what it is in; then what it holds.
	for _, g := range guarded {
		if slices.Contains(pathForms(g.path), dir) {
			return "it is " + g.what
		}
	}
	for _, g := range guarded {
		for _, p := range pathForms(g.path) {
			if g.inside && within(dir, p) {
				return "it is inside " + g.what
			}
		}
	}
	for _, g := range guarded {
		for _, p := range pathForms(g.path) {
			if g.holds && within(p, dir) {
				return "it holds " + g.what + ": " + p
			}
		}
	}
	return ""
}

// pathForms are p as given (cleaned) and with its symlinks resolved, when
// they differ: a workspace's path is resolved, a configured one may not be.
func pathForms(p string) []string {
	if p == "" || !filepath.IsAbs(p) {
		return nil
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		return []string{p, r}
	}
	return []string{p}
}

// within reports whether p lies strictly inside dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)) && p != dir
}
