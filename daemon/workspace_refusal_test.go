//go:build unix

package daemon

import (
	"strings"
	"testing"
)

// refusedWorkspace's table on a made-up user: what is refused and why,
// and what stays open — projects beside hearth's directories, in the
// home directory, in the temp dir, on a removable drive under /run — even
// when the socket sits in the home directory or the temp dir itself.
func TestRefusedWorkspace(t *testing.T) {
	t.Setenv("HOME", "/home/ada")
	t.Setenv("XDG_CONFIG_HOME", "/home/ada/conf")
	cfg := Config{DataDir: "/srv/hearth-data", Socket: "/tmp/hearth-1000/hearth.sock"}
	for dir, want := range map[string]string{
		"/home/ada/conf/hearth":         "it is hearth's configuration directory",
		"/home/ada/conf":                "it holds hearth's configuration directory",
		"/home/ada/.config/hearth/x":    "it is inside hearth's configuration directory",
		"/home/ada/.config":             "it holds hearth's configuration directory",
		"/srv/hearth-data/logs":         "it is inside hearth's data directory",
		"/srv":                          "it holds hearth's data directory",
		"/tmp/hearth-1000":              "it is the directory of hearth's socket",
		"/home/ada/.gnupg/private":      "it is inside your credentials (~/.gnupg)",
		"/home/ada/.config/gh":          "it is your credentials (~/.config/gh)",
		"/home/ada/.local/share":        "it holds your credentials (~/.local/share/keyrings)",
		"/home":                         "it holds ",
		"/home/ada":                     "it is your home directory",
		"/sys/kernel":                   "it is inside a system directory",
		"/var":                          "it is a system directory",
		"/tmp":                          "it is the temp directory",
		"/":                             "it is the filesystem root",
		"/home/ada/src/hearth":          "",
		"/tmp/build/x":                  "",
		"/run/media/ada/usb/project":    "",
		"/var/www/site":                 "",
		"/home/ada/.local/share/hearth": "", // the default data directory, but not this daemon's
	} {
		got := refusedWorkspace(dir, cfg)
		if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", dir, got, want)
		}
	}
	// A socket in the home directory or the temp dir itself refuses that
	// directory, not the projects in it.
	for _, sock := range []string{"/home/ada/hearth.sock", "/tmp/hearth.sock"} {
		cfg := Config{DataDir: "/srv/hearth-data", Socket: sock}
		for _, dir := range []string{"/home/ada/src/p", "/tmp/p"} {
			if why := refusedWorkspace(dir, cfg); why != "" {
				t.Errorf("socket %s: %s refused: %s", sock, dir, why)
			}
		}
	}
}
