package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/hearthd/hearth/session/transcript"
)

// CompactionSink is a Sink that shows a compaction as it runs (ACP's
// compaction_update). A turn's sink that implements it hears each of the
// turn's compactions start and end here, and no Notice of them.
type CompactionSink interface {
	Compaction(c Compaction)
}

// CompactionStatus is where a compaction is; the values are ACP's
// CompactionStatus.
type CompactionStatus string

// The statuses of a compaction.
const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

// Compaction is one compaction of the conversation as the user is shown
// it, at its start (CompactionInProgress) or its end.
type Compaction struct {
	ID      string // unique in the session: the same at its start, its end, and in the transcript
	Status  CompactionStatus
	Summary string // completed by a summary the model wrote: that summary; "" otherwise
	Note    string // completed: hearth's notice of it, what a sink without CompactionSink hears
	Error   string // failed: why
}

// ShownCompaction reads the compaction a stored notice tells of (the view
// of an item kept for the editor): its ID and summary. ok is false for an
// item that is none, or that was stored before notices carried them.
func ShownCompaction(view json.RawMessage) (id, summary string, ok bool) {
	return transcript.ShownCompaction(view)
}

// compactionShown shows one compaction to a turn's sink, from its start.
// Made by startCompaction, used by the turn that compacts.
type compactionShown struct {
	sink Sink
	to   CompactionSink // nil: the sink hears the notice only
	id   string
}

// startCompaction tells sink a compaction starts, when it shows them.
func startCompaction(sink Sink) compactionShown {
	if a, ok := sink.(*attemptSink); ok {
		sink = a.Sink // a request's attempt: the turn's own sink is inside
	}
	var b [8]byte
	rand.Read(b[:])
	s := compactionShown{sink: sink, id: "cmp_" + hex.EncodeToString(b[:])}
	s.to, _ = sink.(CompactionSink)
	if s.to != nil {
		s.to.Compaction(Compaction{ID: s.id, Status: CompactionInProgress})
	}
	return s
}

// ended tells the sink the compaction ended with err (cancelled when ctx
// is done).
func (s compactionShown) ended(ctx context.Context, err error) {
	if s.to == nil {
		return
	}
	if ctx.Err() != nil {
		s.to.Compaction(Compaction{ID: s.id, Status: CompactionCancelled})
		return
	}
	s.to.Compaction(Compaction{ID: s.id, Status: CompactionFailed, Error: err.Error()})
}

// completed tells the sink the compaction is done: note says how, summary
// is the model's summary when it wrote one.
func (s compactionShown) completed(note, summary string) {
	if s.to == nil {
		if s.sink != nil {
			s.sink.Notice(note)
		}
		return
	}
	s.to.Compaction(Compaction{ID: s.id, Status: CompactionCompleted, Summary: summary, Note: note})
}
