package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hearthd/hearth/store"
)

// ShownView marks an item kept only for the editor: the part of an answer
// the user was shown before cancelling its turn. The model never had it
// as a response (the response never completed), so it is never part of
// the view: Open leaves it out, and an editor's replay shows it.
var ShownView = json.RawMessage(`{"shown":"cancelled"}`)

// IsShown reports whether a stored item's view marks it as kept only for
// the editor (ShownView).
func IsShown(view json.RawMessage) bool { return bytes.Equal(view, ShownView) }

// KeepShown stores text, what the user was shown of an answer cut short
// by a cancel, as an assistant message for the editor only (ShownView),
// after what is staged (flushed first, so it stands after everything the
// turn showed before it). The view does not change.
func (t *Transcript) KeepShown(ctx context.Context, turnID int64, text string) error {
	if err := t.Flush(ctx, turnID); err != nil {
		return err
	}
	type part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}{"message", "assistant", []part{{"output_text", text}}}) // strings always encode
	if _, err := t.db.Items().Append(ctx, t.id, turnID, []store.NewItem{{Origin: store.OriginOutput, Data: b, View: ShownView}}); err != nil {
		return t.mark(fmt.Errorf("keep the cancelled answer: %w", err))
	}
	return nil
}

// withoutShown drops the items kept only for the editor; items is in seq
// order, and not changed.
func withoutShown(items []store.Item) []store.Item {
	if !slices.ContainsFunc(items, func(it store.Item) bool { return IsShown(it.View) }) {
		return items
	}
	out := make([]store.Item, 0, len(items)-1)
	for _, it := range items {
		if !IsShown(it.View) {
			out = append(out, it)
		}
	}
	return out
}
