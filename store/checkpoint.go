package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// The writer never checkpoints (its connections open with
// wal_autocheckpoint=0: writerDriver): SQLite's automatic checkpoint runs
// inside the commit that crosses its threshold, and copying the log back
// into the database file then cost a model round trip about 100 µs on
// average, all of it on the path between a response and the next request.
// The checkpointer does that copy on its own connection once the writer
// has been quiet for checkpointQuiet after at least checkpointMin commits,
// or at once after checkpointForce. Not after every quiet moment: a
// checkpoint slowed the commit after it (a model round trip's, measured
// 0.4 ms more on this machine), so it runs about once per hundred.
const (
	checkpointQuiet = 20 * time.Millisecond
	checkpointMin   = 100
	checkpointForce = 500
)

// checkpointer copies the WAL back into the database file off the write
// path. It is started by Open and stopped by Close, which awaits its
// goroutine; a PASSIVE checkpoint never blocks the writer.
type checkpointer struct {
	conn    *sql.DB       // one connection of its own
	kick    chan struct{} // a commit happened (buffered: kicks coalesce)
	stop    chan struct{}
	done    chan struct{}
	pending atomic.Int64 // commits since the last checkpoint began
	runs    atomic.Int64 // checkpoints run
	forced  atomic.Int64 // of them, those checkpointForce commits forced without a quiet moment
	quiet   atomic.Int64 // the quiet moment, in nanoseconds: checkpointQuiet (a test lengthens it)

	mu  sync.Mutex    // guards ran
	ran chan struct{} // closed and replaced after each checkpoint (tests wait on it)
}

func newCheckpointer(conn *sql.DB) *checkpointer {
	c := &checkpointer{conn: conn, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ran: make(chan struct{})}
	c.quiet.Store(int64(checkpointQuiet))
	go c.loop()
	return c
}

// committed tells the checkpointer that the writer committed.
func (c *checkpointer) committed() {
	c.pending.Add(1)
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// ranSignal returns a channel closed when the next checkpoint has run.
func (c *checkpointer) ranSignal() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran
}

func (c *checkpointer) loop() {
	defer close(c.done)
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			switch n := c.pending.Load(); {
			case n < checkpointMin:
				continue
			case n < checkpointForce:
				quiet.Reset(time.Duration(c.quiet.Load()))
				continue
			}
			quiet.Stop()
			c.forced.Add(1)
		case <-quiet.C:
		}
		c.pending.Store(0)
		// A failure (the database busy with a reader's snapshot, say)
		// leaves the log as it is; the next quiet moment tries again.
		_, _ = c.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		c.runs.Add(1)
		c.mu.Lock()
		close(c.ran)
		c.ran = make(chan struct{})
		c.mu.Unlock()
	}
}

// close stops the loop, waits for it and closes the connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.conn.Close()
}
