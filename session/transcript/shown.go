package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hearthd/hearth/store"
)

// Items kept only for the editor: what the user was shown that the model
// never had as input or as a response, so that session/load replays the
// turn as it happened. Each is stored with a view {"shown":kind}; Open
// leaves them out of the model's view.
const (
	// ShownCancelled is the part of an answer the user was shown before
	// cancelling its turn (the response never completed).
	ShownCancelled = "cancelled"
	// ShownCommand is what the user typed for a command hearth ran itself
	// (/compact).
	ShownCommand = "command"
	// ShownNotice is hearth's notice about the turn (a compaction's).
	ShownNotice = "notice"
)

// shownPrefix opens the view of every item kept only for the editor.
const shownPrefix = `{"shown":`

// ShownKind is the kind of a stored item kept only for the editor, and
// false for every other item.
func ShownKind(view json.RawMessage) (string, bool) {
	if !bytes.HasPrefix(view, []byte(shownPrefix)) {
		return "", false
	}
	var v struct {
		Shown string `json:"shown"`
	}
	if json.Unmarshal(view, &v) != nil {
		return "", false
	}
	return v.Shown, true
}

// IsShown reports whether a stored item is kept only for the editor.
func IsShown(view json.RawMessage) bool { return bytes.HasPrefix(view, []byte(shownPrefix)) }

// KeepShown stores text, something the user was shown (kind: ShownCancelled,
// ShownCommand or ShownNotice), as a message for the editor only: the
// user's for a command, the assistant's otherwise. It goes after what is
// staged (flushed first, so it stands after everything the turn showed
// before it). The view does not change.
func (t *Turns) KeepShown(ctx context.Context, turnID int64, kind, text string) error {
	view, _ := json.Marshal(struct {
		Shown string `json:"shown"`
	}{kind})
	return t.keepShown(ctx, turnID, kind, text, view)
}

// keepShown is KeepShown with the item's view (which opens with
// shownPrefix and kind).
func (t *Turns) keepShown(ctx context.Context, turnID int64, kind, text string, view json.RawMessage) error {
	if err := t.flush(ctx, turnID); err != nil {
		return err
	}
	type part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	role, typ := "assistant", "output_text"
	if kind == ShownCommand {
		role, typ = "user", "input_text"
	}
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}{"message", role, []part{{typ, text}}}) // strings always encode
	origin := store.OriginOutput
	if kind == ShownCommand {
		origin = store.OriginInput
	}
	if _, err := t.db.Items().Append(ctx, t.id, turnID, []store.NewItem{{Origin: origin, Data: b, View: view}}); err != nil {
		return t.mark(fmt.Errorf("keep what the editor was shown (%s): %w", kind, err))
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
