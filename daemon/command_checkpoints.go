package daemon

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
	"github.com/hearthd/hearth/workspace/sandbox"
	"github.com/hearthd/hearth/workspace/watch"
)

// unrestorable, as a checkpoint row's pre-image hash, says the turn
// changed the file but its content before is not kept: a file over
// maxCommandPreImage, one that could not be read, or one a command
// changed where the sandbox could not trap it. An undo names it instead
// of putting it back (UndoResult.NotRestorable).
const unrestorable = "unrestorable"

// directory, as a checkpoint row's pre-image or post hash, says the path
// was a directory before or after the turn (its mode in the row): a turn
// that made one has an undo remove it once empty, one that removed it has
// the undo make it again (restore_dirs.go).
const directory = "directory"

// maxCommandPreImage bounds the pre-image of a file a command changes:
// a bigger file is named as not restorable.
const maxCommandPreImage = 16 << 20

// commandChanges keeps the pre-images of the files a session's commands
// change (workspace.CommandChanges): where the sandbox traps them, each
// file's content and mode before the first change of a turn, in the same
// object store and rows as the file tools' (checkpoints.go), before the
// command may change it; then, as each call ends, what the file holds
// after (the row's post hash, for the undo's conflict check). Where the
// sandbox cannot trap a command, the watcher's journal names what changed
// during the call: a file created is kept as absent before (an undo
// removes it), any other change is marked unrestorable. A change is the
// turn's that runs when it happens (a process of exec_command keeps
// writing after its call), or the last one's. One per open session
// (openSession.commands), bound on its first tool call; safe for
// concurrent use.
type commandChanges struct {
	mu      sync.Mutex // guards the fields from kept to synced, and the binding (db nil until bind)
	db      *store.DB
	objects objectStore
	session string
	root    string
	turn    *atomic.Int64  // the session's turnKey
	watcher *watch.Watcher // nil: none
	log     *slog.Logger
	keeper  *checkpointKeeper                 // its lock keeps a pre-image from a sweep until its row names it
	marked  *atomic.Bool                      // the session's checkpointed: its turn's end keeps the budget
	kept    map[turnPath]store.FileCheckpoint // the rows of the current turn's files (and of pending ones), by turn and path
	keeping map[turnPath]chan struct{}        // pre-images being kept: closed once on record
	current int64                             // the turn kept describes
	pending map[turnPath]int                  // changed since the last settle (the post hash to record), by order of change
	seq     int                               // the last order given in pending
	full    map[turnPath]bool                 // directories that held entries when kept: gone after, their content was not kept
	synced  bool                              // every object keep wrote is on disk
}

type turnPath struct {
	turn int64
	path string
}

// bind sets up c for session s on its first use, records what its
// processes changed since the last call (before this call may write the
// same files through the file tools), and returns it.
func (c *commandChanges) bind(d *Daemon, s *openSession) *commandChanges {
	c.mu.Lock()
	if c.db == nil {
		c.db, c.objects, c.session = d.db, checkpointObjects(d.cfg.DataDir), s.id
		c.root, c.turn, c.watcher, c.log = s.ws.root.Path(), &s.turnKey, s.ws.watcher, d.log
		c.keeper, c.marked = d.ckpt, &s.checkpointed
		c.kept, c.pending, c.keeping = map[turnPath]store.FileCheckpoint{}, map[turnPath]int{}, map[turnPath]chan struct{}{}
		c.full = map[turnPath]bool{}
	}
	c.mu.Unlock()
	c.settle()
	return c
}

// Before keeps rel's pre-image for the running turn, unless kept already;
// another command changing rel meanwhile waits until it is.
func (c *commandChanges) Before(rel string) {
	k := turnPath{c.turn.Load(), rel}
	c.mu.Lock()
	c.newTurn(k.turn)
	c.changed(k)
	_, kept := c.kept[k]
	wait, busy := c.keeping[k]
	if !kept && !busy {
		c.keeping[k] = make(chan struct{})
	}
	c.mu.Unlock()
	switch {
	case busy:
		<-wait
		return
	case kept:
		return
	}
	c.marked.Store(true)
	c.keeper.mu.RLock()
	f, full := c.preImage(rel)
	if f.PreHash != "" && f.PreHash != directory {
		// A pre-image is on record before the change; a file that did
		// not exist, or a directory, waits for settle's batch (a daemon
		// killed before it leaves it out of the undo, losing nothing of
		// the user's).
		c.record(k.turn, f)
	}
	c.keeper.mu.RUnlock()
	c.mu.Lock()
	c.kept[k] = f
	if full {
		c.full[k] = true
	}
	close(c.keeping[k])
	delete(c.keeping, k)
	c.mu.Unlock()
}

// newTurn forgets the rows of turns before turn, but those pending, once
// turn begins changing files; c.mu is held.
func (c *commandChanges) newTurn(turn int64) {
	if turn == c.current {
		return
	}
	c.current = turn
	for k := range c.kept {
		if _, ok := c.pending[k]; !ok && k.turn != turn {
			delete(c.kept, k)
			delete(c.full, k)
		}
	}
}

// preImage reads what rel holds now: its content kept in the object store
// and its mode, a directory and its mode (full: it holds entries), or
// absent; unrestorable when it cannot be kept. The post hash starts as the
// pre-image's: settle records the real one.
func (c *commandChanges) preImage(rel string) (f store.FileCheckpoint, full bool) {
	f = store.FileCheckpoint{Path: rel, PreHash: unrestorable}
	path := filepath.Join(c.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.PreHash = ""
	case err == nil && fi.IsDir():
		f.PreHash, f.PreMode = directory, uint32(fi.Mode().Perm())
		full = !emptyDir(path)
	case err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCommandPreImage:
		// A directory, a symlink, a device or a big file: named, not kept.
	default:
		f.PreMode = uint32(fi.Mode().Perm())
		if b, err := readAtMost(path, maxCommandPreImage); err == nil {
			if h, err := c.keep(b); err == nil {
				f.PreHash = h
			} else {
				c.log.Warn("cannot keep a command's pre-image", "session", c.session, "path", rel, "err", err)
			}
		}
	}
	f.Post = f.PreHash
	return f, full
}

// keep is objectStore.put without its fsyncs, which would make the
// command wait on the disk for each file: a pre-image is in the page cache
// at once, so it survives a kill of the daemon, and settle makes the call's
// objects durable with one flush (as durable as their rows, which SQLite
// commits without a sync in WAL mode).
func (c *commandChanges) keep(content []byte) (string, error) {
	h, err := c.objects.write(content, false)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.synced = false
	c.mu.Unlock()
	return h, nil
}

// record writes f's row; a failure leaves the file out of the checkpoint
// (the command goes on: it is not refused for it).
func (c *commandChanges) record(turn int64, f store.FileCheckpoint) {
	if err := c.db.Checkpoints().Record(context.Background(), c.session, turn, f); err != nil {
		c.log.Warn("cannot record a command's change", "session", c.session, "path", f.Path, "err", err)
	}
}

// Begin notes the watcher's position; the end it returns settles what
// the call's command changed, taking it from the watcher's journal when
// the sandbox did not trap the command.
func (c *commandChanges) Begin() func(trapped bool) {
	var cursor uint64
	if c.watcher != nil {
		cursor = c.watcher.Cursor()
	}
	return func(trapped bool) {
		if !trapped && c.watcher != nil {
			c.fromWatcher(cursor)
		}
		c.settle()
	}
}

// fromWatcher records what the watcher saw change since cursor and the
// trap did not tell.
func (c *commandChanges) fromWatcher(cursor uint64) {
	if err := c.watcher.Sync(context.Background()); err != nil {
		return
	}
	changes, _, _ := c.watcher.Changes(cursor)
	turn := c.turn.Load()
	for _, ch := range changes {
		if ch.Dir {
			if ch.Op == watch.Created {
				c.untrapped(turn, ch.Path, true) // settle finds it a directory
			}
			continue
		}
		if ch.Op == watch.Renamed {
			c.untrapped(turn, ch.Old, false)
		}
		c.untrapped(turn, ch.Path, ch.Op == watch.Created || ch.Op == watch.Renamed)
	}
}

// untrapped records a change the trap did not see: a file created did
// not exist before; any other's pre-image is lost.
func (c *commandChanges) untrapped(turn int64, rel string, created bool) {
	if sandbox.HasGitComponent(filepath.FromSlash(rel)) {
		return
	}
	k := turnPath{turn, rel}
	f := store.FileCheckpoint{Path: rel, PreHash: unrestorable}
	if created {
		f.PreHash = ""
	}
	c.mu.Lock()
	if _, kept := c.kept[k]; !kept {
		c.kept[k] = f
	}
	c.changed(k)
	c.mu.Unlock()
}

// changed marks k pending, in the order of first change; c.mu is held.
func (c *commandChanges) changed(k turnPath) {
	if _, ok := c.pending[k]; !ok {
		c.seq++
		c.pending[k] = c.seq
	}
}

// settle records what each file changed since the last settle holds now:
// the post hash an undo checks before putting it back.
func (c *commandChanges) settle() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.db == nil || len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	keys := make([]turnPath, 0, len(c.pending))
	for k := range c.pending {
		keys = append(keys, k)
	}
	// In the order first changed: an undo puts the last back first.
	slices.SortFunc(keys, func(a, b turnPath) int { return cmp.Compare(c.pending[a], c.pending[b]) })
	rows := make([]store.TurnFile, len(keys))
	full := make([]bool, len(keys))
	for i, k := range keys {
		rows[i] = store.TurnFile{Turn: k.turn, FileCheckpoint: c.kept[k]}
		full[i] = c.full[k]
	}
	clear(c.pending)
	c.marked.Store(true)
	synced := c.synced
	c.synced = true
	c.mu.Unlock()
	if !synced {
		syncObjects(c.objects.dir) // command_checkpoints_linux.go
	}
	rows = slices.DeleteFunc(postStates(c.root, rows, full), func(r store.TurnFile) bool {
		// A directory only passed through (mkdir -p of one there): no row.
		return r.PreHash == directory && r.Post == directory && r.PostMode == r.PreMode
	})
	if err := c.db.Checkpoints().RecordAll(context.Background(), c.session, rows); err != nil {
		c.log.Warn("cannot record what a command changed", "session", c.session, "files", len(rows), "err", err)
	}
}

// postStates fills in what each row's path holds now under root: its
// content's hash and mode, or a directory and its mode. A directory that
// held entries when kept and is gone now took content the trap did not
// see (a rename of a whole tree): it is named unrestorable.
func postStates(root string, rows []store.TurnFile, full []bool) []store.TurnFile {
	for i := range rows {
		path := filepath.Join(root, filepath.FromSlash(rows[i].Path))
		fi, err := os.Lstat(path)
		switch {
		case err != nil:
			rows[i].Post, rows[i].PostMode = "", 0
		case fi.IsDir():
			rows[i].Post, rows[i].PostMode = directory, uint32(fi.Mode().Perm())
		default:
			rows[i].Post, rows[i].PostMode = postHash(path), uint32(fi.Mode().Perm())
		}
		if full[i] && rows[i].Post != directory {
			rows[i].PreHash = unrestorable
		}
	}
	return rows
}

// emptyDir reports whether the directory path holds no entry.
func emptyDir(path string) bool {
	d, err := os.Open(path)
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) == 0
}

// postHash is the sha256 of what path holds ("" when it is absent or not
// a regular file).
func postHash(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readAtMost reads path, failing when it holds more than max bytes.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = errors.New("too big")
	}
	return b, err
}

var _ workspace.CommandChanges = (*commandChanges)(nil)
