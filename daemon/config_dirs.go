package daemon

import (
	"os"
	"path/filepath"
)

// ConfigDirs lists every directory hearth reads its configuration from:
// ~/.config/hearth (the env file with the API key; the user's AGENTS.md)
// and $XDG_CONFIG_HOME/hearth when that variable is set (where the user's
// AGENTS.md is then read from). The sandbox denies them all: a command
// that could rewrite AGENTS.md would instruct every later session.
func ConfigDirs() []string {
	var dirs []string
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		dirs = append(dirs, filepath.Join(x, "hearth"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		if d := filepath.Join(home, ".config", "hearth"); len(dirs) == 0 || dirs[0] != d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
