package sandbox

import (
	"sync"
	"time"
)

// What a running command shows of its output (Command.Show): the first
// and last liveHeadBytes/liveTailBytes, the middle counted; at most one
// update every liveEvery.
const (
	liveHeadBytes = 8 << 10
	liveTailBytes = 8 << 10
	liveEvery     = 250 * time.Millisecond
)

// liveFirst is how long after its first output a command's output is
// first shown: a command that ends sooner shows it in its result alone.
// Most commands a model runs end within it, and an update sent while one
// runs takes the daemon's CPU from the command (a variable for tests).
var liveFirst = 100 * time.Millisecond

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
	select {
	case <-l.done:
		return
	case <-l.wake:
	}
	wait := time.NewTimer(liveFirst) // the first output starts the clock
	defer wait.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-wait.C:
		}
		l.mu.Lock()
		text := l.out.String()
		l.mu.Unlock()
		l.show(text)
		wait.Reset(liveEvery)
		select { // output since
		case <-l.done:
			return
		case <-l.wake:
		}
	}
}

// stop ends the updates: when it returns, show is not running and will not
// run again.
func (l *liveOutput) stop() {
	close(l.done)
	<-l.ended
}
