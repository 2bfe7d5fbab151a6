package session

import (
	"context"
	"sync"
)

// earlyReads are the reads one response calls, each started as soon as its
// call's item is done, before the response's end arrives: a read changes
// nothing, so it may run before the response is stored (as staged reads
// do), and its output is then ready when the round trip needs it rather
// than begun there. Created by Conversation.read on the response's first
// read; ended by stop, which cancels what still runs and waits for it.
// Every method is safe on a nil *earlyReads (no early reads).
type earlyReads struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex // guards calls
	calls map[string]*earlyRead
}

// earlyRead is one read started early: res is set when done is closed.
type earlyRead struct {
	call ToolCall
	done chan struct{}
	res  ToolResult
}

// maxEarlyReads bounds the reads of one response started before its end:
// more run as they would have, when the response has ended.
const maxEarlyReads = maxConcurrentTools

// startEarly starts call if it is a read, and the response has not started
// too many already. It returns er, or a new earlyReads when er was nil and
// call was started.
func (b *toolbox) startEarly(ctx context.Context, er *earlyReads, call ToolCall) *earlyReads {
	conc, ok := b.tools.(ConcurrentTools)
	if !ok || call.CallID == "" || !conc.Concurrent(call) {
		return er
	}
	if er == nil {
		ectx, cancel := context.WithCancel(ctx)
		er = &earlyReads{ctx: ectx, cancel: cancel, calls: map[string]*earlyRead{}}
	}
	er.mu.Lock()
	defer er.mu.Unlock()
	if _, dup := er.calls[call.CallID]; dup || len(er.calls) >= maxEarlyReads {
		return er
	}
	r := &earlyRead{call: call, done: make(chan struct{})}
	er.calls[call.CallID] = r
	er.wg.Add(1)
	go func() {
		defer er.wg.Done()
		defer close(r.done)
		r.res = b.runTool(er.ctx, call)
	}()
	return er
}

// take hands over the early read of call, if one was started for exactly
// that call; nil otherwise. Each is handed over once.
func (er *earlyReads) take(call ToolCall) *earlyRead {
	if er == nil {
		return nil
	}
	er.mu.Lock()
	defer er.mu.Unlock()
	r := er.calls[call.CallID]
	if r == nil || r.call != call {
		return nil
	}
	delete(er.calls, call.CallID)
	return r
}

// finished reports whether every call of group has an early read that has
// ended: its results can then be taken without waiting.
func (er *earlyReads) finished(group []ToolCall) bool {
	if er == nil {
		return false
	}
	er.mu.Lock()
	defer er.mu.Unlock()
	for _, call := range group {
		r := er.calls[call.CallID]
		if r == nil || r.call != call {
			return false
		}
		select {
		case <-r.done:
		default:
			return false
		}
	}
	return true
}

// stop cancels the reads no one took and waits for all of them to end.
func (er *earlyReads) stop() {
	if er == nil {
		return
	}
	er.cancel()
	er.wg.Wait()
}
