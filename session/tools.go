package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hearthd/hearth/session/transcript"
	"github.com/hearthd/hearth/store"
)

// Tools is what a conversation's model may call. The daemon implements it
// on the workspace's toolset and the editor's permission prompts. Run never
// fails: a bad call is a ToolResult with IsError and an explanation.
type Tools interface {
	Specs() []json.RawMessage
	Run(ctx context.Context, call ToolCall) ToolResult
}

// ConcurrentTools is implemented by Tools some of whose calls (those that
// only read, and never ask the user: a read-only tool's, a command that
// only reads) may run side by side: such calls of one response run
// concurrently, may start before the response ends, and are committed
// with the next request, their outputs in call order.
type ConcurrentTools interface {
	Concurrent(call ToolCall) bool
}

// ToolCall is one tool call the model made: a function call, or a custom
// tool's call with freeform input (Custom).
type ToolCall struct {
	CallID    string
	Name      string
	Arguments string // JSON text as the model wrote it; may be invalid. A custom call's is {"input": its text}
	// Custom: the model called a custom tool (a custom_tool_call, e.g.
	// apply_patch offered with its grammar); it is run as the tool's
	// function form and answered with a custom_tool_call_output.
	Custom bool
}

// ToolResult is a tool's answer, sent back as function_call_output (or
// custom_tool_call_output).
type ToolResult struct {
	Output  string
	IsError bool
	// Images go to the model after Output, as input_image parts of the
	// function_call_output (read_file of an image).
	Images []Image

	// For the editor only, never sent to the model.
	Title     string
	Kind      string   // ACP tool kind: read, search, edit, execute
	Locations []string // workspace-relative paths the call touched
	Diff      *Diff    // what an edit changed

	// Seen is what the model now knows of a file (the read set), committed
	// with the output.
	Seen *store.SeenWrite
}

// Diff is a file's content before and after an edit, for the editor.
type Diff struct {
	Path string `json:"path"`          // workspace-relative
	Old  string `json:"old,omitempty"` // "" for a new file
	New  string `json:"new"`
}

// toolbox runs a conversation's tool calls and stages their outputs in
// its transcript, in call order. It lives as long as its Conversation; the
// turn running the calls (and the reads a response starts early) use it.
type toolbox struct {
	tools Tools // may be nil: every call is answered that no tool exists
	tr    *transcript.Transcript
}

// onlyReads reports whether output calls tools and every one of them may
// run concurrently (ConcurrentTools: reads, which change nothing).
func (b *toolbox) onlyReads(output []json.RawMessage) bool {
	conc, ok := b.tools.(ConcurrentTools)
	if !ok {
		return false
	}
	calls := 0
	for _, it := range output {
		if call, ok := readItem(it).call(); ok {
			if !conc.Concurrent(call) {
				return false
			}
			calls++
		}
	}
	return calls > 0
}

// maxConcurrentTools bounds the read-only calls of one response that run
// at once.
const maxConcurrentTools = 8

// slowReads is how long reads whose calls are only staged run before the
// calls are stored anyway, so that the editor can show them running.
const slowReads = 50 * time.Millisecond

// runTools runs the calls of one response and stages each output, in call
// order, for the next request (or the end of the turn), to be committed
// with its row. A call that may change something runs once the response
// that called it and the outputs before it are committed (runGroup).
// Consecutive calls to tools that may run concurrently (ConcurrentTools:
// reads) run side by side; the others run one at a time, in order, with
// their permission flow. After cancellation the remaining calls are
// answered as cancelled (not run), so the transcript stays valid for the
// next turn. staged says the calls themselves are staged, not stored
// (reply.staged: they are all reads): the editor then hears they ran, and
// finished, once the next request has stored them. early holds the reads
// that started while the response arrived: their results are used rather
// than running them again.
func (b *toolbox) runTools(ctx context.Context, turnID int64, calls []ToolCall, sink Sink, staged bool, early *earlyReads) (StopReason, error) {
	conc, _ := b.tools.(ConcurrentTools)
	for i := 0; i < len(calls); {
		group := nextGroup(ctx, calls[i:], conc)
		results, err := b.runGroup(ctx, turnID, group, sink, &staged, early)
		if err != nil {
			return "", err
		}
		b.stageOutputs(group, results, sink, staged)
		i += len(group)
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	return "", nil
}

// nextGroup is the calls at the start of calls that run together: the
// consecutive calls to tools that may run concurrently (at most
// maxConcurrentTools), or the first call alone.
func nextGroup(ctx context.Context, calls []ToolCall, conc ConcurrentTools) []ToolCall {
	j := 1
	if conc != nil && ctx.Err() == nil && conc.Concurrent(calls[0]) {
		for j < len(calls) && j < maxConcurrentTools && conc.Concurrent(calls[j]) {
			j++
		}
	}
	return calls[:j]
}

// runGroup runs one group of calls and returns their results in call
// order; after cancellation they are answered as cancelled, not run. The
// editor hears a call runs once the call is stored: now, unless *staged.
func (b *toolbox) runGroup(ctx context.Context, turnID int64, group []ToolCall, sink Sink, staged *bool, early *earlyReads) ([]ToolResult, error) {
	results := make([]ToolResult, len(group))
	if ctx.Err() != nil {
		for k := range group {
			results[k] = ToolResult{Output: "error: cancelled by the user before this tool ran", IsError: true}
		}
		return results, nil
	}
	if sink != nil && !*staged {
		for _, call := range group {
			sink.ToolCall(call, "in_progress", nil)
		}
	}
	run := func(call ToolCall) ToolResult {
		if r := early.take(call); r != nil {
			<-r.done
			return r.res
		}
		return b.runTool(ctx, call)
	}
	switch {
	case early.finished(group):
		for k, call := range group {
			results[k] = run(call)
		}
	case len(group) == 1 && !*staged:
		if !b.readOnly(group[0]) {
			// A daemon killed while this call runs must know of
			// everything before it: the response is committed already,
			// the outputs of the calls before it in that response are now.
			if err := b.tr.Flush(context.WithoutCancel(ctx), turnID); err != nil {
				return results, err
			}
		}
		results[0] = run(group[0])
	default:
		return results, b.runConcurrent(ctx, turnID, group, results, run, sink, staged)
	}
	return results, nil
}

// readOnly says call changes nothing: its tool may run concurrently.
func (b *toolbox) readOnly(call ToolCall) bool {
	conc, ok := b.tools.(ConcurrentTools)
	return ok && conc.Concurrent(call)
}

// runConcurrent runs group side by side, each call's result into results.
// Reads whose calls are only staged (*staged) and that take long (a grep of
// a large tree) are shown running: after slowReads what is staged is stored
// at once, at the cost of a commit more in this round trip, and *staged is
// cleared.
func (b *toolbox) runConcurrent(ctx context.Context, turnID int64, group []ToolCall, results []ToolResult, run func(ToolCall) ToolResult, sink Sink, staged *bool) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for k, call := range group {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[k] = run(call)
		}()
	}
	go func() { // ends with the calls; awaited below
		wg.Wait()
		close(done)
	}()
	if *staged {
		timer := time.NewTimer(slowReads)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			if err := b.tr.Flush(context.WithoutCancel(ctx), turnID); err != nil {
				<-done
				return err
			}
			*staged = false
			for _, call := range group {
				if sink != nil {
					sink.ToolCall(call, "in_progress", nil)
				}
			}
		}
	}
	<-done
	return nil
}

// stageOutputs stages each call's output, in call order, with what the
// editor is told once it is stored: with the next request, or before the
// next call that may change something. A command's output waits too: a
// daemon killed before that commit answers the call as interrupted, as
// it would had it been killed while the command ran.
func (b *toolbox) stageOutputs(group []ToolCall, results []ToolResult, sink Sink, staged bool) {
	for k, call := range group {
		res := &results[k]
		item := store.NewItem{Origin: store.OriginInput, Data: callOutput(call, res.Output, res.Images...), View: res.view()}
		var seen []store.SeenWrite
		if res.Seen != nil {
			seen = append(seen, *res.Seen)
		}
		b.tr.Stage([]store.NewItem{item}, seen, told(sink, call, res, staged))
	}
}

// told is what the editor hears once a call's output is stored, or lost:
// that the call finished, and first that it ran if the call itself was
// staged (stored only now, with its output).
func told(sink Sink, call ToolCall, res *ToolResult, staged bool) func(stored bool) {
	return func(stored bool) {
		if sink == nil {
			return
		}
		status := "completed"
		if res.IsError || !stored {
			status = "failed"
		}
		if staged && stored {
			sink.ToolCall(call, "in_progress", nil)
		}
		sink.ToolCall(call, status, res)
	}
}

func (b *toolbox) runTool(ctx context.Context, call ToolCall) ToolResult {
	if b.tools == nil {
		return ToolResult{Output: fmt.Sprintf("error: no tool named %q is available", call.Name), IsError: true}
	}
	return b.tools.Run(ctx, call)
}
