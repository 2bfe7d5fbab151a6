package transcript

import "encoding/json"

// View is a snapshot of the model's view, taken by Transcript.View: its
// items, how many of the first are the session's initial items, and the
// epoch it was taken at. It is a value and never changes: its items are
// shared with the transcript, which never changes a committed item (it
// only appends, or cuts the view to a new slice), so a View may be kept
// and read from any goroutine, without a lock, for as long as the caller
// likes; it does not follow the transcript's later changes.
type View struct {
	items   []json.RawMessage // capacity capped: an append never writes into the transcript's
	initial int
	epoch   uint64
}

// Len is the number of items in the view.
func (v View) Len() int { return len(v.items) }

// Items returns a copy of the view's items.
func (v View) Items() []json.RawMessage { return append([]json.RawMessage(nil), v.items...) }

// Latest returns the last item of the view that match accepts.
func (v View) Latest(match func(json.RawMessage) bool) (json.RawMessage, bool) {
	for i := len(v.items) - 1; i >= 0; i-- {
		if match(v.items[i]) {
			return v.items[i], true
		}
	}
	return nil, false
}

// Bytes is the size of the view as stored.
func (v View) Bytes() int {
	n := 0
	for _, it := range v.items {
		n += len(it)
	}
	return n
}

// Initial returns the session's initial items (outside any turn) in the
// view.
func (v View) Initial() []json.RawMessage {
	return append([]json.RawMessage(nil), v.items[:v.initial]...)
}

// InitialCount is how many of the view's first items are initial.
func (v View) InitialCount() int { return v.initial }

// Epoch is the transcript's epoch when the view was taken: it changes
// whenever the view stops extending what the server may hold of it, so a
// baseline taken at another epoch is gone.
func (v View) Epoch() uint64 { return v.epoch }
