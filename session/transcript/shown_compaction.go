package transcript

import (
	"context"
	"encoding/json"
)

// shownCompaction is the view of a compaction's notice: ShownNotice, and
// the compaction it tells of, so that a replay can show that compaction
// again as it was shown live.
type shownCompaction struct {
	Shown      string `json:"shown"`
	Compaction string `json:"compaction,omitempty"` // its ID
	Summary    string `json:"summary,omitempty"`    // the model's summary, when it wrote one
}

// KeepCompaction keeps a compaction's notice (note) for the editor, as
// KeepShown does with ShownNotice, with the compaction's id and summary.
func (t *Turns) KeepCompaction(ctx context.Context, turnID int64, id, note, summary string) error {
	view, _ := json.Marshal(shownCompaction{Shown: ShownNotice, Compaction: id, Summary: summary})
	return t.keepShown(ctx, turnID, ShownNotice, note, view)
}

// ShownCompaction reads the compaction a stored notice's view tells of:
// false for other views, and for notices kept without one (KeepShown).
func ShownCompaction(view json.RawMessage) (id, summary string, ok bool) {
	if !IsShown(view) {
		return "", "", false
	}
	var v shownCompaction
	if json.Unmarshal(view, &v) != nil || v.Shown != ShownNotice || v.Compaction == "" {
		return "", "", false
	}
	return v.Compaction, v.Summary, true
}
