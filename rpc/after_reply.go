package rpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"
)

// AfterReply arranges for f to run once the answer to the call being
// handled is written on stream, a stream from NewServerStream: ctx is the
// context the handler was given (not a detached or derived one), which
// jsonrpc2 also writes the answer with. A notification that must not
// overtake the answer — ACP's available_commands_update names a session
// the client learns from session/new's answer — is sent from f. f runs on
// the goroutine that wrote the answer, and must not block. When the answer
// cannot be written (the connection failed), f does not run. AfterReply
// reports false, and f is dropped, for a stream of another kind.
func AfterReply(stream jsonrpc2.Stream, ctx context.Context, f func()) bool {
	s, ok := stream.(*wireStream)
	if !ok {
		return false
	}
	s.afterMu.Lock()
	if s.after == nil {
		s.after = map[context.Context]func(){}
	}
	if _, dup := s.after[ctx]; !dup {
		s.afterN.Add(1)
	}
	prev := s.after[ctx]
	s.after[ctx] = func() {
		if prev != nil {
			prev()
		}
		f()
	}
	s.afterMu.Unlock()
	return true
}

// afterWrite runs what AfterReply arranged for the call whose answer was
// just written with ctx (the first message written with a handler's
// context is its answer); a failed write drops it.
func (s *wireStream) afterWrite(ctx context.Context, err error) {
	if s.afterN.Load() == 0 {
		return
	}
	s.afterMu.Lock()
	f, ok := s.after[ctx]
	if ok {
		delete(s.after, ctx)
		s.afterN.Add(-1)
	}
	s.afterMu.Unlock()
	if ok && err == nil {
		f()
	}
}
