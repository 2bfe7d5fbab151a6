package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strings"

	"github.com/hearthd/hearth/workspace/watch"
)

const (
	defaultReadLimit = 2000      // lines shown when the model gives no limit
	maxReadLineRunes = 2000      // longer lines are cut
	maxReadOutput    = 256 << 10 // bytes of numbered output per call
)

var readFileDef = toolDef{
	Tool: Tool{
		Name:        "read_file",
		Description: "Read a text file in the workspace. Returns its lines numbered from 1. Use offset and limit to page through long files. A PNG, JPEG, GIF or WebP image is returned as the image itself, for you to look at.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the working directory."},` +
			`"offset":{"type":"integer","minimum":1,"description":"Line number to start at (1-based). Default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines to return. Default 2000."}` +
			`},"required":["path"],"additionalProperties":false}`),
		Kind:     "read",
		ReadOnly: true,
	},
	fields:  []string{"path", "offset", "limit"},
	example: `{"path":"README.md","offset":1,"limit":200}`,
	run:     (*Toolset).readFile,
}

type readFileArgs struct {
	Path   *string `json:"path"`
	Offset *int    `json:"offset"`
	Limit  *int    `json:"limit"`
}

func (ts *Toolset) readFile(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	var a readFileArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return errorResult(msg)
	}
	if a.Path == nil {
		return missingArg(d, "path")
	}
	offset, limit := 1, defaultReadLimit
	if a.Offset != nil {
		if *a.Offset < 1 {
			return errorResult(fmt.Sprintf("offset must be 1 or more (the first line is 1), not %d", *a.Offset))
		}
		offset = *a.Offset
	}
	if a.Limit != nil {
		if *a.Limit < 1 {
			return errorResult(fmt.Sprintf("limit must be 1 or more, not %d", *a.Limit))
		}
		limit = *a.Limit
	}
	abs, name, err := ts.at.resolveName(*a.Path)
	if err != nil {
		return errorResult(err.Error())
	}
	rel := ts.at.root.Rel(abs)
	shown := ts.at.show(rel)
	var res Result
	if ts.ed.Reader != nil {
		res = ts.reader().readFromEditor(ctx, abs, name, shown, offset, limit)
	} else {
		res = ts.reader().readFileAt(ctx, name, shown, offset, limit)
	}
	res.Title = "Read " + shown
	if !res.IsError {
		res.Locations = []string{rel}
	}
	return res
}

// fileReader reads the files of one read_file call: from the call's
// editor when it has the file open (unsaved changes included), else
// through the root's handle. A plain value made by Toolset.reader for one
// call.
type fileReader struct {
	at place
	ed Editor
}

// reader is the fileReader of ts's call.
func (ts *Toolset) reader() fileReader { return fileReader{at: ts.at, ed: ts.ed} }

// readFileAt reads name (the root handle's name for rel) through the handle.
func (fr fileReader) readFileAt(ctx context.Context, name, rel string, offset, limit int) Result {
	// Stat first for the messages; OpenRegular then checks again what it
	// opened, since the path may change in between.
	fi, err := fr.at.root.handle().Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult(fmt.Sprintf("file %q does not exist; use list_dir or grep to find the right path", rel))
	case err != nil:
		return errorResult(useFailed("read", rel, err))
	case fi.IsDir():
		return errorResult(fmt.Sprintf("%q is a directory, not a file; use list_dir to see its entries", rel))
	case !fi.Mode().IsRegular():
		return errorResult(fmt.Sprintf("%q is not a regular file (%v); only regular files can be read", rel, fi.Mode().Type()))
	}
	f, fi, err := fr.at.root.OpenRegular(name)
	if err != nil {
		return errorResult(useFailed("read", rel, err))
	}
	defer f.Close()
	// An image is told by its content, whatever its name.
	head := make([]byte, imageSniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return readFailed(ctx, rel, err)
	}
	r := io.MultiReader(bytes.NewReader(head[:n]), f)
	if mime := SniffImage(head[:n]); mime != "" {
		return readImage(ctx, r, fi.Size(), rel, mime)
	}
	return numberedText(ctx, r, rel, offset, limit, fi.Size())
}

// readFromEditor reads rel through the editor: its buffer, unsaved changes
// included. A directory or special file is refused as on disk, without
// asking; a file on disk over watch.ReadWholeMax is read from the disk. When the
// editor fails, the disk answers, with a note saying so; a file on neither
// gets the disk's message.
func (fr fileReader) readFromEditor(ctx context.Context, abs, name, rel string, offset, limit int) Result {
	fi, err := fr.at.root.handle().Stat(name)
	switch {
	case err == nil && fi.IsDir():
		return errorResult(fmt.Sprintf("%q is a directory, not a file; use list_dir to see its entries", rel))
	case err == nil && !fi.Mode().IsRegular():
		return errorResult(fmt.Sprintf("%q is not a regular file (%v); only regular files can be read", rel, fi.Mode().Type()))
	case err == nil && fi.Size() > watch.ReadWholeMax, err == nil && fr.isImage(name):
		// An editor would send a file this large whole (what it holds
		// open, or reads from disk, in one message): the disk's pages are
		// read instead, as far as they are shown. An editor has no text
		// for an image: its bytes are the disk's.
		return fr.readFileAt(ctx, name, rel, offset, limit)
	}
	text, err := fr.ed.Reader.ReadText(ctx, abs)
	if ctx.Err() != nil {
		return cancelledResult("read_file")
	}
	if err != nil {
		res := fr.readFileAt(ctx, name, rel, offset, limit)
		if !res.IsError {
			res.Output += editorReadNote(rel, err)
		}
		return res
	}
	res := numberedText(ctx, strings.NewReader(text), rel, offset, limit, int64(len(text)))
	if !res.IsError {
		// The read set keeps what the model saw of the buffer, as of a file
		// on disk: the text itself only while it is small.
		res.Buffer = true
		if len(text) <= watch.MaxContent {
			res.Content = text
		}
	}
	return res
}

// keeper keeps what is written to it while that is at most watch.MaxContent
// bytes, and nothing once it is more.
type keeper struct {
	b    []byte
	over bool
}

func (k *keeper) Write(p []byte) (int, error) {
	if !k.over {
		if len(k.b)+len(p) > watch.MaxContent {
			k.b, k.over = nil, true
		} else {
			k.b = append(k.b, p...)
		}
	}
	return len(p), nil
}

// numberedText is read_file's answer for the text r yields (about size
// bytes): its lines numbered, from offset, at most limit of them and
// maxReadOutput bytes. A file of at most watch.ReadWholeMax bytes is read whole,
// for the hash of all of it and, when small enough, all of it
// (Result.Content); a larger one only as far as what is shown.
func numberedText(ctx context.Context, r io.Reader, rel string, offset, limit int, size int64) Result {
	whole := size <= watch.ReadWholeMax
	src := io.Reader(ctxReader{ctx, r})
	var h hash.Hash
	var kept *keeper
	if whole {
		// Every byte passes through the hash, shown or not: the read set
		// needs the hash of the whole file.
		h = sha256.New()
		kept = &keeper{over: size > watch.MaxContent}
		if !kept.over {
			kept.b = make([]byte, 0, max(size, 0))
		}
		src = io.TeeReader(src, io.MultiWriter(h, kept))
	}
	// The buffer holds the sniffed head, and the whole of a small file.
	bufSize := 64 << 10
	if size >= 0 && size < int64(bufSize) {
		bufSize = max(int(size)+1, watch.SniffLen)
	}
	br := bufio.NewReaderSize(src, bufSize)
	head, _ := br.Peek(watch.SniffLen)
	if watch.IsBinary(head, len(head) < watch.SniffLen) {
		if !whole {
			return Result{Output: binaryNote(rel, size)}
		}
		n, err := io.Copy(io.Discard, br)
		if err != nil {
			return readFailed(ctx, rel, err)
		}
		return Result{Output: binaryNote(rel, n), Hash: hashHex(h)}
	}
	p, err := pageLines(br, offset, limit, !whole)
	if err != nil {
		return readFailed(ctx, rel, err)
	}
	out := &p.out
	switch {
	case p.lines == 0:
		out.WriteString("(empty file)")
	case offset > p.lines:
		return errorResult(fmt.Sprintf("offset %d is past the end of %s, which has %d lines", offset, rel, p.lines))
	case p.more:
		fmt.Fprintf(out, "[truncated: showing lines %d-%d of a file of %s, too large to count its lines; use offset/limit to read more]",
			offset, offset+p.shown-1, FormatBytes(size))
	case offset+p.shown-1 < p.lines:
		fmt.Fprintf(out, "[truncated: showing lines %d-%d; file has %d lines; use offset/limit to read more]", offset, offset+p.shown-1, p.lines)
	}
	res := Result{Output: out.String()}
	if whole {
		res.Hash = hashHex(h)
		if !kept.over {
			res.Content = string(kept.b)
		}
	}
	return res
}

func binaryNote(rel string, size int64) string {
	return fmt.Sprintf("%s is a binary file of %d bytes; its content is not shown.", rel, size)
}

// page is what pageLines read: the numbered lines shown, how many lines it
// read and showed, and whether it stopped before the end.
type page struct {
	out          strings.Builder
	lines, shown int
	more         bool // stopped after the lines shown, with more to read
}

// pageLines numbers the lines of br from offset, at most limit of them and
// maxReadOutput bytes, reading to the end to count them all, or, with
// stop, no further than the last line shown (or the first one left out).
// A line costs at most 4*maxReadLineRunes bytes of memory, however long.
func pageLines(br *bufio.Reader, offset, limit int, stop bool) (*page, error) {
	p := &page{}
	buf := make([]byte, 0, 4*maxReadLineRunes)
	var entry []byte // one numbered line, reused
	capped := false
	for {
		if stop && capped {
			p.more = true
			return p, nil
		}
		if stop && p.shown == limit {
			_, err := br.Peek(1)
			if err == nil {
				p.more = true
				return p, nil
			}
			if err != io.EOF {
				return nil, err
			}
		}
		line, n, err := readLine(br, buf, 4*maxReadLineRunes)
		buf = line[:0]
		if n == 0 && err == io.EOF {
			return p, nil
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		p.lines++
		if p.lines >= offset && p.shown < limit && !capped {
			entry = appendLineNumber(entry[:0], p.lines)
			entry = append(entry, '\t')
			entry = appendDisplayLine(entry, trimEOL(line), maxReadLineRunes, n > len(line))
			entry = append(entry, '\n')
			if p.out.Len()+len(entry) > maxReadOutput {
				capped = true
			} else {
				p.out.Write(entry)
				p.shown++
			}
		}
		if err == io.EOF {
			return p, nil
		}
	}
}

func readFailed(ctx context.Context, rel string, err error) Result {
	if ctx.Err() != nil {
		return cancelledResult("read_file")
	}
	return errorResult(useFailed("read", rel, err))
}

func hashHex(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// unwrapPathErr drops the absolute path an *fs.PathError carries: the model
// knows the file by its relative path, which the caller already shows.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
