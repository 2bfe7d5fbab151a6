package daemon

import (
	"context"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/store"
)

// usageMark is where a turn's requests begin in the request log: the
// prompt's answer carries what they cost (PromptResponse.usage). A plain
// value made as the turn starts; ok is false when the log could not be read,
// and the answer then carries no usage rather than a wrong one.
type usageMark struct {
	after int64
	ok    bool
}

func markUsage(ctx context.Context, db *store.DB, sessionID string) usageMark {
	id, err := db.Requests().LastID(ctx, sessionID)
	return usageMark{after: id, ok: err == nil}
}

// since is the turn's usage as ACP states it, nil when the turn asked no
// model or the log could not be read.
func (m usageMark) since(ctx context.Context, db *store.DB, sessionID string) *acp.Usage {
	if !m.ok {
		return nil
	}
	u, err := db.Requests().UsageAfter(ctx, sessionID, m.after)
	if err != nil || u.Input+u.Output == 0 {
		return nil
	}
	cached, thought := int(u.Cached), int(u.Reasoning)
	return &acp.Usage{
		InputTokens:      int(u.Input),
		OutputTokens:     int(u.Output),
		TotalTokens:      int(u.Input + u.Output),
		CachedReadTokens: &cached,
		ThoughtTokens:    &thought,
	}
}
