package daemon

import (
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// What a turn left in each file it changed is kept too, by hash, so that a
// file an undo or rewind leaves as it is (a conflict) can be shown with
// what differs: a unified diff of what the turn left against what is there
// now. Those objects only serve the diff: they are written without an
// fsync (one damaged by a power cut fails its hash check, and the diff
// says so), and the budget counts them.

// maxConflictDiff bounds one conflict's diff; a longer one is cut at a
// line with a last line saying so.
const maxConflictDiff = 16 << 10

// putLoose keeps content like put, without waiting for the disk.
func (o objectStore) putLoose(content string) (string, error) {
	h, err := o.write([]byte(content), false)
	if err != nil {
		return "", fmt.Errorf("keep what the turn left: %w", err)
	}
	return h, nil
}

// keepPost keeps what the turn leaves in a file, for the diff of a
// conflict: f's post-image, when not empty.
func (r turnRecorder) keepPost(f *store.FileCheckpoint, content string) {
	if content == "" {
		return
	}
	if _, err := r.objects.putLoose(content); err == nil {
		f.PostKept, f.PostSize = true, int64(len(content))
	}
}

// conflictDiff is the unified diff of what f's turn left against what is
// in the file now (nil: absent) as the restorer saw it, bounded
// (maxConflictDiff).
func conflictDiff(objects objectStore, f store.FileCheckpoint, now *string) string {
	left := ""
	if f.Post != "" && f.Post != hashOf(nil) {
		var err error
		if left, err = objects.get(f.Post); err != nil {
			return fmt.Sprintf("(what the turn left in %s is not kept: %v)\n", f.Path, err)
		}
	}
	from, to := "a/"+f.Path, "b/"+f.Path
	if f.Post == "" {
		from = "/dev/null"
	}
	text := ""
	if now == nil {
		to = "/dev/null"
	} else {
		text = *now
	}
	if strings.ContainsRune(left, 0) || strings.ContainsRune(text, 0) {
		return fmt.Sprintf("Binary files %s and %s differ\n", from, to)
	}
	u, err := udiff.ToUnified(from, to, left, udiff.Lines(left, text), udiff.DefaultContextLines)
	if err != nil {
		return fmt.Sprintf("(no diff of %s: %v)\n", f.Path, err)
	}
	if len(u) > maxConflictDiff {
		cut := strings.LastIndexByte(u[:maxConflictDiff], '\n') + 1
		u = u[:cut] + fmt.Sprintf("… %d more bytes of the diff not shown\n", len(u)-cut)
	}
	return u
}

// diffsText shows conflict diffs after an undo's or a rewind's message.
func diffsText(diffs []rpc.ConflictDiff) string {
	if len(diffs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nWhat differs in the files left as they are (what the turn left → what is there now):")
	for _, d := range diffs {
		fmt.Fprintf(&b, "\n\n```diff\n%s```", d.Diff)
	}
	return b.String()
}
