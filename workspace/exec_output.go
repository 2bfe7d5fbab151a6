package workspace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// What a process keeps of the output no call has read yet: its first
// pendingHead and last pendingTail bytes; the middle is counted.
const (
	pendingHead = 64 << 10
	pendingTail = 64 << 10
)

// pendingOutput is what a process printed since a call last took it:
// bounded head and tail, the cut counted. Written by the process's
// goroutine, read by the call that waits on it; lives with its process.
type pendingOutput struct {
	mu         sync.Mutex // guards head, tail, cut
	head, tail []byte
	cut        int64         // bytes dropped between head and tail
	wake       chan struct{} // a write since the last look (capacity 1)
}

func newPendingOutput() *pendingOutput { return &pendingOutput{wake: make(chan struct{}, 1)} }

func (o *pendingOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	n := len(p)
	if room := pendingHead - len(o.head); room > 0 {
		take := min(room, len(p))
		o.head = append(o.head, p[:take]...)
		p = p[take:]
	}
	o.tail = append(o.tail, p...)
	if len(o.tail) > 2*pendingTail {
		drop := len(o.tail) - pendingTail
		o.cut += int64(drop)
		o.tail = append(o.tail[:0], o.tail[drop:]...)
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return n, nil
}

// chunk is output taken from a process: its head and tail, and how many
// bytes between them were dropped.
type chunk struct {
	head, tail []byte
	cut        int64
}

// take returns what was printed since the last take and forgets it.
func (o *pendingOutput) take() chunk {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.peekLocked()
	o.head, o.tail, o.cut = nil, nil, 0
	return c
}

// peek returns what was printed since the last take, keeping it.
func (o *pendingOutput) peek() chunk {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.peekLocked()
}

func (o *pendingOutput) peekLocked() chunk {
	cut, tail := o.cut, o.tail
	if len(tail) > pendingTail {
		cut += int64(len(tail) - pendingTail)
		tail = tail[len(tail)-pendingTail:]
	}
	return chunk{head: bytes.Clone(o.head), tail: bytes.Clone(tail), cut: cut}
}

// total is how many bytes were printed in the chunk.
func (c chunk) total() int64 { return int64(len(c.head)+len(c.tail)) + c.cut }

// text is the chunk within budget bytes (0: no bound), as valid UTF-8: its
// cut middle, if any, marked with about how many tokens were left out.
func (c chunk) text(budget int) string {
	head, tail := c.head, c.tail
	if budget > 0 && len(head)+len(tail) > budget {
		if c.cut == 0 { // one text: cut its middle
			all := append(bytes.Clone(head), tail...)
			head, tail = all[:budget/2], all[len(all)-(budget-budget/2):]
		} else { // cut already between head and tail: shorten both
			keepHead := min(len(head), budget/2)
			head, tail = head[:keepHead], tail[len(tail)-min(len(tail), budget-keepHead):]
		}
	}
	return sandbox.JoinCut(head, tail, c.total(), func(cut int64) string {
		return fmt.Sprintf("…%d tokens truncated…", sandbox.ApproxTokens(cut))
	})
}

// execReport is one exec_command or write_stdin result, in the layout the
// models trained on these tools read: a chunk id, the call's wall time,
// the process's exit code or the id to write to it with, the output's
// original token count, then the output within the call's token budget.
type execReport struct {
	wall   time.Duration
	exited bool
	code   int // when exited
	id     int // when still running
	out    chunk
	budget int      // max_output_tokens
	notes  []string // hearth's own lines after the output
}

func (r execReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Chunk ID: %06x\nWall time: %.4f seconds\n", rand.IntN(1<<24), r.wall.Seconds())
	if r.exited {
		fmt.Fprintf(&b, "Process exited with code %d\n", r.code)
	} else {
		fmt.Fprintf(&b, "Process running with session ID %d\n", r.id)
	}
	fmt.Fprintf(&b, "Original token count: %d\nOutput:\n", sandbox.ApproxTokens(r.out.total()))
	text := r.out.text(r.budget * 4)
	b.WriteString(text)
	if len(r.notes) > 0 && text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	for _, n := range r.notes {
		b.WriteString(n + "\n")
	}
	return b.String()
}
