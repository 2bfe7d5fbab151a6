package workspace

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
)

// readImage is read_file's answer for an image file (r yields all of it,
// size bytes by its stat): the image for the model to see, described in
// Output, with the hash of the whole file for the read set. An image over
// MaxImageBytes, or one whose header is unreadable, is described and not
// sent: that is an answer, not a failed call. One over the cap is not read
// at all (nor hashed: the read set cannot follow it).
func readImage(ctx context.Context, r io.Reader, size int64, rel, mime string) Result {
	if size > MaxImageBytes {
		return Result{Output: imageTooLarge(rel, mime, size)}
	}
	h := sha256.New()
	r = io.TeeReader(ctxReader{ctx, r}, h)
	// The stat may be stale (the file is growing): never read past the cap.
	data, err := io.ReadAll(io.LimitReader(r, MaxImageBytes+1))
	if err != nil {
		return readFailed(ctx, rel, err)
	}
	if len(data) > MaxImageBytes {
		return Result{Output: imageTooLarge(rel, mime, int64(len(data)))}
	}
	im, err := DecodeImage(data)
	if err != nil {
		return Result{Hash: hashHex(h), Output: fmt.Sprintf("%s: %v; it is not shown.", rel, err)}
	}
	return Result{Hash: hashHex(h), Image: &im, Output: fmt.Sprintf("%s: %s. The image follows.", rel, im.Describe())}
}

func imageTooLarge(rel, mime string, size int64) string {
	return fmt.Sprintf("%s is a %s image of %s, larger than the %s hearth sends to the model; it is not shown. Ask the user for a smaller copy if you need to see it.",
		rel, formatName(mime), FormatBytes(size), FormatBytes(MaxImageBytes))
}

// isImage reports whether the regular file name (the root handle's name)
// starts like an image. A file it cannot open is not one: the caller's own
// read then reports why.
func (fr fileReader) isImage(name string) bool {
	f, _, err := fr.at.root.OpenRegular(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, imageSniffLen)
	n, _ := io.ReadFull(f, head)
	return SniffImage(head[:n]) != ""
}
