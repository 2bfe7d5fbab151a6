package session

import (
	"encoding/json"
	"runtime/debug"
)

// bigOutput is the size of a response's output past which, once it is
// stored, the process hands its free memory back to the system.
const bigOutput = 8 << 20

// giveBack returns the heap's free memory to the system when a response's
// output is big, before it is stored: reading it left garbage of its size
// and more (the pieces it was gathered in, the deltas), which the runtime
// would otherwise keep for minutes, and the database is about to make
// copies of its own (SQLite's, in C memory, freed when stored). It costs a
// collection, once per such answer.
func giveBack(output []json.RawMessage) {
	n := 0
	for _, it := range output {
		n += len(it)
	}
	if n >= bigOutput {
		debug.FreeOSMemory()
	}
}
