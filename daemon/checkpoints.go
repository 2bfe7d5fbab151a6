package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// objectStore keeps file contents by their sha256 in one directory of the
// data directory (never in the workspace, never in its .git): one file an
// object, named by its hash, written once through a temporary file, an
// fsync and a rename, so an object is whole or absent whatever kills
// hearth. A plain value; the directory outlives every daemon.
type objectStore struct{ dir string }

func checkpointObjects(dataDir string) objectStore {
	return objectStore{dir: filepath.Join(dataDir, "checkpoints", "objects")}
}

// put keeps content and returns its hash; content kept already is not
// written again. It waits for the disk: a pre-image on record must
// survive a power cut.
func (o objectStore) put(content string) (string, error) {
	h, err := o.write([]byte(content), true)
	if err != nil {
		return "", fmt.Errorf("keep a pre-image: %w", err)
	}
	return h, nil
}

// write keeps b under its hash, whole (a temporary file renamed into
// place), unless it is there already; durable waits for the disk, file
// and directory.
func (o objectStore) write(b []byte, durable bool) (string, error) {
	h := hashOf(b)
	path := filepath.Join(o.dir, h)
	if _, err := os.Stat(path); err == nil {
		return h, nil
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return "", fmt.Errorf("create the checkpoint store: %w", err)
	}
	f, err := os.CreateTemp(o.dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if durable {
		syncDir(o.dir) // the rename survives a power cut
	}
	return h, nil
}

// get returns the content kept under hash, checked against it.
func (o objectStore) get(hash string) (string, error) {
	b, err := os.ReadFile(filepath.Join(o.dir, hash))
	if err != nil {
		return "", fmt.Errorf("read the pre-image %s: %w", hash, err)
	}
	if hashOf(b) != hash {
		return "", fmt.Errorf("the pre-image %s is damaged", hash)
	}
	return string(b), nil
}

// syncDir flushes dir's entries; where directories cannot be synced
// (Windows) the rename is as durable as the OS makes it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// turnRecorder keeps the pre-images of what one call of a turn's file
// tools changes: the Toolset.Checkpoint hook. Made
// by sessionTools.run for one call.
type turnRecorder struct {
	db      *store.DB
	objects objectStore
	session string
	turn    int64 // the running prompt's key (openSession.turnKey)

	keeper   *checkpointKeeper // its lock keeps the object from a sweep until the row names it
	recorded *atomic.Bool      // set once a row is recorded (openSession.checkpointed)
}

func (r turnRecorder) before(ctx context.Context, c workspace.Change) error {
	if r.keeper != nil {
		r.keeper.mu.RLock()
		defer r.keeper.mu.RUnlock()
	}
	if r.recorded != nil {
		r.recorded.Store(true)
	}
	f := store.FileCheckpoint{Path: c.Rel, PreMode: uint32(c.Mode & fs.ModePerm)}
	if c.Existed {
		h, err := r.objects.put(c.Old)
		if err != nil {
			return err
		}
		f.PreHash, f.PreSize = h, int64(len(c.Old))
	}
	if c.New != nil {
		f.Post = hashOf([]byte(*c.New))
		if c.Existed {
			f.PostMode = f.PreMode // a write keeps the file's mode
		}
		r.keepPost(&f, *c.New) // conflict_diff.go
	}
	// Not cancelled with the call: a write that goes ahead has its row.
	return r.db.Checkpoints().Record(context.WithoutCancel(ctx), r.session, r.turn, f)
}
