package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// steerer gives `hearth ask`'s running turn the lines typed while its
// answer streams, as _session/steering: the model reads each in the answer
// it is writing. A line typed while a permission question is open is that
// question's answer. Lives for one ask's turn.
type steerer struct {
	client *rpc.Client
	id     acp.SessionId
	con    *console
	perm   *permitter
}

// run steers with each non-empty line until lines closes or ctx ends.
func (s *steerer) run(ctx context.Context, lines <-chan string) {
	for {
		select {
		case <-ctx.Done():
			return
		case l, ok := <-lines:
			if !ok {
				return
			}
			if s.perm.takeAnswer(l) {
				continue
			}
			if text := strings.TrimSpace(l); text != "" {
				s.steer(ctx, text)
			}
		}
	}
}

// steer sends text to the running turn and says what became of it. With
// no turn running it is refused (idleBehavior promptRequired): ask waits
// for one turn only.
func (s *steerer) steer(ctx context.Context, text string) {
	params := map[string]any{
		"sessionId": s.id,
		"prompt":    []acp.ContentBlock{acp.TextBlock(text)},
		"_meta":     map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}},
	}
	var res struct {
		Outcome string `json:"outcome"`
	}
	err := s.client.Call(ctx, rpc.MethodSessionSteering, params, &res)
	if ctx.Err() != nil {
		return
	}
	shown := visibleLine(text)
	s.con.aside(func() {
		switch {
		case err != nil:
			fmt.Fprintf(s.con.err, "hearth: could not steer with %q: %v\n", shown, err)
		case res.Outcome == "injected":
			fmt.Fprintf(s.con.err, "hearth: steered: %q goes to the model in this answer\n", shown)
		default:
			fmt.Fprintf(s.con.err, "hearth: not delivered: %q (the answer had ended)\n", shown)
		}
	})
}

// startSteering reads steering lines while the turn runs: from the
// terminal the permitter asks on (the one reader of it, handing answers
// to its questions), else from stdin — unless the prompt itself came from
// stdin. stop ends the steerer and the terminal's reader, and waits for
// both; a reader of stdin cannot be interrupted (stdin stays blocking for
// the shell's sake) and ends at its end or with the process.
func startSteering(ctx context.Context, s *steerer, promptOnStdin bool) (stop func()) {
	if promptOnStdin {
		return func() {}
	}
	sctx, cancel := context.WithCancel(ctx)
	quit := make(chan struct{})
	var lines <-chan string
	var readerDone <-chan struct{}
	tty := s.perm.tty
	if tty != nil {
		s.perm.route()
		lines, readerDone = readLines(s.perm.in, quit)
	} else {
		lines, _ = readLines(bufio.NewReader(os.Stdin), quit)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(sctx, lines)
	}()
	return func() {
		cancel()
		<-done
		close(quit)
		if tty != nil {
			tty.SetReadDeadline(time.Now()) // unblocks the read
			<-readerDone
			tty.SetReadDeadline(time.Time{})
		}
	}
}

// readLines sends r's lines, until r ends or quit closes; done closes when
// the reading goroutine has ended.
func readLines(r *bufio.Reader, quit <-chan struct{}) (lines <-chan string, done <-chan struct{}) {
	out := make(chan string)
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		defer close(out)
		for {
			l, err := r.ReadString('\n')
			if l != "" && (err == nil || err == io.EOF) {
				select {
				case out <- strings.TrimSuffix(l, "\n"):
				case <-quit:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return out, fin
}
