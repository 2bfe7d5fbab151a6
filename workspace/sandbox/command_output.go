//go:build unix

package sandbox

import (
	"io"
	"os"
	"time"
)

// commandOutput is a command's output as it is read: a goroutine copies
// the read end of its pipe into a head-and-tail buffer (and to live) until
// every writer is gone, then closes done. finish waits for it.
type commandOutput struct {
	pr   *os.File
	out  *headTail
	done chan struct{} // closed when the reader stops; out is its until then
}

func readOutput(pr *os.File, live io.Writer) *commandOutput {
	o := &commandOutput{pr: pr, out: newHeadTail(shellHeadBytes, shellTailBytes), done: make(chan struct{})}
	var dst io.Writer = o.out
	if live != nil {
		dst = io.MultiWriter(o.out, live)
	}
	go func() {
		defer close(o.done)
		io.Copy(dst, pr)
	}()
	return o
}

// finish waits up to drainWait for the end of the output, once the command
// has ended; escaped says a process outside it still held the pipe, and
// reading stopped there.
func (o *commandOutput) finish() (output string, escaped bool) {
	drain := time.NewTimer(drainWait)
	defer drain.Stop()
	select {
	case <-o.done:
	case <-drain.C:
		o.pr.SetReadDeadline(time.Now())
		<-o.done
		escaped = true
	}
	return o.out.String(), escaped
}
