package sandbox

import (
	"strings"
	"testing"
)

// A cell server that dies before its hello is reported as such at once,
// not after the start timeout: the daemon's copy of the server's end of the
// socket is closed as soon as the server has it, so its death reads as EOF.
func TestCellThatDiesBeforeItsHello(t *testing.T) {
	_, err := startCell(t.Name(), []string{"/bin/false"}, false)
	if err == nil || !strings.Contains(err.Error(), "ended while starting") {
		t.Fatalf("a server that exits at once: %v; want that it ended while starting", err)
	}
}
