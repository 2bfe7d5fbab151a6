package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// fencePrefix starts the name of a Watcher's marker directory (Sync's),
// followed by its process's pid: a directory whose process is gone — killed
// before it could remove it — is removed by the next Watcher of the user
// that looks in the same place (sweepFences).
const fencePrefix = "hearth-watch-"

// swept holds the directories already swept by this process.
var swept sync.Map

// makeFenceDir makes this Watcher's marker directory in base (the temp
// dir when ""), having first removed there, once per process, the marker
// directories of the user's processes that have exited.
func makeFenceDir(base string) (string, error) {
	if base == "" {
		base = os.TempDir()
	}
	if _, done := swept.LoadOrStore(base, true); !done {
		sweepFences(base)
	}
	return os.MkdirTemp(base, fmt.Sprintf("%s%d-", fencePrefix, os.Getpid()))
}

// sweepFences removes the marker directories in base whose process has
// exited. Names without a pid (an older hearth's: a random number after the
// prefix) read as the pid of no process there is and are removed too.
func sweepFences(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), fencePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if ownedByMe(dir) && processGone(pid) {
			os.RemoveAll(dir)
		}
	}
}
