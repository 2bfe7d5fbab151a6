package transcript

import (
	"encoding/json"

	"github.com/hearthd/hearth/store"
)

// meter is what the last response's usage says of the view, and when the
// view was last compacted: what decides the next compaction. Its
// invariants: input and output are the last response's tokens and counted
// the items of the view (committed, then staged) they cover, all 0 when no
// response with usage came since the view was opened, compacted or
// rewound; compactedAt is the view's length after the last compaction (or
// less after a rewind below it). It does no I/O and has no lock of its
// own: it is guarded by its Transcript's mu. It lives as long as its
// Transcript; a compaction or rewind replaces it.
type meter struct {
	input, output, counted int
	compactedAt            int
}

// estimate is NextInput's: the input tokens of a request that sends
// committed, staged and settings (their encoding's length).
func (m *meter) estimate(committed []json.RawMessage, staged []store.NewItem, settings int) int {
	from, n := 0, settings
	if m.input > 0 && m.counted <= len(committed)+len(staged) {
		from, n = m.counted, 4*(m.input+m.output)
	}
	for i := from; i < len(committed)+len(staged); i++ {
		if i < len(committed) {
			n += len(committed[i])
		} else {
			n += len(staged[i-len(committed)].Data)
		}
	}
	return (n + 3) / 4
}
