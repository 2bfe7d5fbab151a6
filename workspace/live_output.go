package workspace

import (
	"sync"
	"time"
)

// What a running command shows of its output (Toolset.WithLive): the first
// and last liveHeadBytes/liveTailBytes, the middle counted; at most one
// update every liveEvery.
const (
	liveHeadBytes = 8 << 10
	liveTailBytes = 8 << 10
	liveEvery     = 250 * time.Millisecond
)

// WithLive returns a copy of ts whose shell calls show their output while
// the command runs: show gets the output so far (its head and tail, the
// middle counted, as the final output is), at once when output first comes
// and then at most every liveEvery while it changes. show runs on a
// goroutine of the call, one call at a time, and never after the call
// returned; it must not block for long. What the model gets is unchanged.
// The copy lives for one call.
func (ts *Toolset) WithLive(show func(output string)) *Toolset {
	c := *ts
	c.live = show
	return &c
}

// liveOutput is the io.Writer a command's output is copied to when its
// call shows it live: it keeps a bounded copy, and its goroutine hands it to
// show, throttled. Lives for one command: startLive starts it, stop ends
// it and waits for its goroutine.
type liveOutput struct {
	show  func(string)
	mu    sync.Mutex // guards out
	out   *headTail
	wake  chan struct{} // a write since the last show (capacity 1)
	done  chan struct{} // closed by stop
	ended chan struct{} // closed when the goroutine returns
}

func startLive(show func(string)) *liveOutput {
	l := &liveOutput{show: show, out: newHeadTail(liveHeadBytes, liveTailBytes),
		wake: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	go l.run()
	return l
}

func (l *liveOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.out.Write(p)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *liveOutput) run() {
	defer close(l.ended)
	wait := time.NewTimer(0)
	<-wait.C
	defer wait.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-l.wake:
		}
		l.mu.Lock()
		text := l.out.String()
		l.mu.Unlock()
		l.show(text)
		wait.Reset(liveEvery)
		select {
		case <-l.done:
			return
		case <-wait.C:
		}
	}
}

// stop ends the updates: when it returns, show is not running and will not
// run again.
func (l *liveOutput) stop() {
	close(l.done)
	<-l.ended
}
