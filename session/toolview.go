package session

import "encoding/json"

// ToolView is how the editor was shown a tool call's result, stored beside
// its output item (store.NewItem.View) so that a replay shows it the same
// way. Never sent to the model.
type ToolView struct {
	Title     string   `json:"title,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Locations []string `json:"locations,omitempty"`
	Diff      *Diff    `json:"diff,omitempty"`
	Failed    bool     `json:"failed,omitempty"` // the call failed (its output need not say "error:")
}

// maxViewDiff bounds the diff a view keeps: an edit of a huge file replays
// with its title and locations, without the two copies of the file.
const maxViewDiff = 512 << 10

// view is the stored form of what the editor was shown of res; nil when
// there is nothing beyond the output.
func (res *ToolResult) view() json.RawMessage {
	v := ToolView{Title: res.Title, Kind: res.Kind, Locations: res.Locations, Diff: res.Diff, Failed: res.IsError}
	if v.Diff != nil && len(v.Diff.Old)+len(v.Diff.New) > maxViewDiff {
		v.Diff = nil
	}
	if v.Title == "" && v.Kind == "" && len(v.Locations) == 0 && v.Diff == nil && !v.Failed {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil // strings and slices of strings always encode
	}
	return b
}
