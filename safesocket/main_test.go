package safesocket

import (
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
)

// TestMain keeps the tests away from the user's HEARTH_*, OPENAI_* and XDG_*
// locations, and from HOME.
func TestMain(m *testing.M) { testenv.Main(m.Run) }
