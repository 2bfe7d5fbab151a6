package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearthd/hearth/workspace/watch"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestReadFile(t *testing.T) {
	r, root, _ := newTree(t)
	content := "alpha\nbeta\r\n\ngamma"
	writeFile(t, filepath.Join(root, "notes", "a.txt"), content)
	ts := NewToolset(r)

	res := call(t, ts, "read_file", `{"path":"notes/a.txt"}`)
	want := "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma\n"
	if res.IsError || res.Output != want {
		t.Fatalf("read_file = %+v, want output %q", res, want)
	}
	if res.Hash != sha(content) {
		t.Errorf("Hash = %s, want sha256 of the file %s", res.Hash, sha(content))
	}
	if !slices.Equal(res.Locations, []string{"notes/a.txt"}) || res.Title != "Read notes/a.txt" {
		t.Errorf("Locations = %v, Title = %q", res.Locations, res.Title)
	}

	res = call(t, ts, "read_file", `{"path":"./notes/a.txt","offset":2,"limit":2}`)
	want = "     2\tbeta\n     3\t\n[truncated: showing lines 2-3; file has 4 lines; use offset/limit to read more]"
	if res.IsError || res.Output != want || res.Hash != sha(content) {
		t.Errorf("read_file offset 2 limit 2 = %+v, want output %q", res, want)
	}

	res = call(t, ts, "read_file", `{"path":"notes/a.txt","offset":4,"limit":10}`)
	if res.IsError || res.Output != "     4\tgamma\n" {
		t.Errorf("read_file of the last line = %+v", res)
	}

	abs := filepath.Join(root, "notes", "a.txt")
	res = call(t, ts, "read_file", mustJSON(t, map[string]string{"path": abs}))
	if res.IsError || res.Title != "Read notes/a.txt" {
		t.Errorf("read_file by absolute path inside = %+v", res)
	}
}

func TestReadFileBadInput(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "one\ntwo\n")
	mkdir(t, filepath.Join(root, "dir"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))
	ts := NewToolset(r)
	tests := []struct{ args, want string }{
		{`{"path":"dir"}`, "is a directory, not a file; use list_dir"},
		{`{"path":"."}`, "is a directory"},
		{`{"path":"missing.txt"}`, `file "missing.txt" does not exist`},
		{`{"path":"leak"}`, "outside the workspace"},
		{`{"path":"../outside/secret.txt"}`, "outside the workspace"},
		{`{"path":"a.txt","offset":0}`, "offset must be 1 or more"},
		{`{"path":"a.txt","offset":-3}`, "offset must be 1 or more"},
		{`{"path":"a.txt","limit":0}`, "limit must be 1 or more"},
		{`{"path":"a.txt","offset":3}`, "offset 3 is past the end of a.txt, which has 2 lines"},
		{`{"path":"a.txt","offset":1.5}`, `"offset" of read_file must be an integer`},
		{`{"path":"a.txt","limit":"10"}`, `"limit" of read_file must be an integer, not string`},
		{`{"path":["a.txt"]}`, `"path" of read_file must be a string, not array`},
	}
	for _, tt := range tests {
		res := call(t, ts, "read_file", tt.args)
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("read_file %s = %+v, want an error containing %q", tt.args, res, tt.want)
		}
		if strings.Contains(res.Output, "secret needle") {
			t.Errorf("read_file %s leaked a file outside the workspace", tt.args)
		}
	}
}

func TestReadFileEmpty(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "empty"), "")
	res := call(t, NewToolset(r), "read_file", `{"path":"empty"}`)
	if res.IsError || res.Output != "(empty file)" || res.Hash != sha("") {
		t.Errorf("read_file of an empty file = %+v", res)
	}
}

func TestReadFileTruncation(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)

	// Past the default line limit.
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, filepath.Join(root, "long.txt"), b.String())
	res := call(t, ts, "read_file", `{"path":"long.txt"}`)
	if res.IsError || strings.Count(res.Output, "\n") != 2000 || !strings.Contains(res.Output, "  2000\tline 2000\n") ||
		!strings.HasSuffix(res.Output, "[truncated: showing lines 1-2000; file has 5000 lines; use offset/limit to read more]") {
		t.Errorf("read_file of 5000 lines: %d lines, tail %q", strings.Count(res.Output, "\n"), res.Output[max(0, len(res.Output)-120):])
	}
	if res.Hash != sha(b.String()) {
		t.Error("Hash must cover the whole file, not the lines shown")
	}

	// Past the byte cap: 100k lines of 100 bytes is ~10 MB.
	b.Reset()
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "%06d %s\n", i, strings.Repeat("x", 92))
	}
	writeFile(t, filepath.Join(root, "huge.txt"), b.String())
	res = call(t, ts, "read_file", `{"path":"huge.txt","limit":100000}`)
	if res.IsError || len(res.Output) > maxReadOutput+200 || !strings.Contains(res.Output, "file has 100000 lines; use offset/limit") {
		t.Errorf("read_file of a huge file: %d bytes, tail %q", len(res.Output), res.Output[max(0, len(res.Output)-120):])
	}
	if res.Hash != sha(b.String()) {
		t.Error("Hash of a huge file must cover all of it")
	}

	// One line longer than the per-line cap, with multi-byte runes.
	line := strings.Repeat("é", 3000)
	writeFile(t, filepath.Join(root, "wide.txt"), line+"\nshort\n")
	res = call(t, ts, "read_file", `{"path":"wide.txt"}`)
	want := "     1\t" + strings.Repeat("é", maxReadLineRunes) + " [line truncated]\n     2\tshort\n"
	if res.IsError || res.Output != want {
		t.Errorf("read_file of a wide line: %q...", res.Output[:min(80, len(res.Output))])
	}
}

func TestReadFileBinary(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)
	nul := "PNG\x00\x01\x02 header and more"
	invalid := strings.Repeat("\xff\xfe\x80\x81", 100) + "abc"
	latin1 := "caf\xe9 cr\xe8me br\xfbl\xe9e\n"
	writeFile(t, filepath.Join(root, "img.png"), nul)
	writeFile(t, filepath.Join(root, "noise.bin"), invalid)
	writeFile(t, filepath.Join(root, "menu.txt"), latin1)

	for name, content := range map[string]string{"img.png": nul, "noise.bin": invalid} {
		res := call(t, ts, "read_file", mustJSON(t, map[string]string{"path": name}))
		want := fmt.Sprintf("%s is a binary file of %d bytes", name, len(content))
		if res.IsError || !strings.Contains(res.Output, want) || strings.Contains(res.Output, "header") {
			t.Errorf("read_file %s = %+v, want %q", name, res, want)
		}
		if res.Hash != sha(content) {
			t.Errorf("read_file %s: Hash must be set for binary files too", name)
		}
	}
	res := call(t, ts, "read_file", `{"path":"menu.txt"}`)
	if res.IsError || res.Output != "     1\tcaf\uFFFD cr\uFFFDme br\uFFFDl\uFFFDe\n" {
		t.Errorf("read_file of Latin-1 text = %+v", res)
	}
}

func TestReadFileCancelled(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "lines.txt"), strings.Repeat("some text\n", 200000))
	writeFile(t, filepath.Join(root, "oneline.txt"), strings.Repeat("x", 2<<20))
	writeFile(t, filepath.Join(root, "blob.bin"), "\x00"+strings.Repeat("\x01", 2<<20))
	ts := NewToolset(r)
	for _, name := range []string{"lines.txt", "oneline.txt", "blob.bin"} {
		// The context turns cancelled after a few checks: the read must stop
		// there (one more check to report it) instead of reading 2 MB on.
		const after = 3
		ctx := newCountdownCtx(after)
		res := ts.Run(ctx, "read_file", []byte(mustJSON(t, map[string]string{"path": name})))
		if !res.IsError || res.Output != "read_file was cancelled before it finished" {
			t.Errorf("read_file %s with a context cancelled mid-read = %+v", name, res)
		}
		if n := ctx.checks.Load(); n > after+2 {
			t.Errorf("read_file %s checked the context %d times after it was cancelled; want it to stop at once", name, n-after-1)
		}
	}
}

// A read keeps the text it hashed, whole even when only part is shown, for
// the read set; a file larger than watch.MaxContent is hashed but not kept.
func TestReadFileKeepsContent(t *testing.T) {
	r, root, _ := newTree(t)
	small := strings.Repeat("a line of some length\n", 500) // 11 KB: larger than the sniffed head
	writeFile(t, filepath.Join(root, "small.txt"), small)
	big := strings.Repeat("x", watch.MaxContent) + "\nmore\n"
	writeFile(t, filepath.Join(root, "big.txt"), big)
	ts := NewToolset(r)

	res := call(t, ts, "read_file", `{"path":"small.txt","offset":3,"limit":1}`)
	if res.IsError || res.Content != small || res.Hash != sha(small) {
		t.Fatalf("read_file of part of a small file: error %v, %d bytes kept of %d, hash %s", res.IsError, len(res.Content), len(small), res.Hash)
	}
	res = call(t, ts, "read_file", `{"path":"big.txt"}`)
	if res.IsError || res.Content != "" || res.Hash != sha(big) {
		t.Fatalf("read_file of a file over watch.MaxContent: error %v, %d bytes kept, hash ok %v", res.IsError, len(res.Content), res.Hash == sha(big))
	}
}

// lineSource yields 64 MiB of numbered lines, counting the bytes read from
// it.
type lineSource struct {
	next  int
	buf   []byte
	count int64
}

func (s *lineSource) Read(p []byte) (int, error) {
	if s.count >= 64<<20 {
		return 0, io.EOF
	}
	for len(s.buf) < len(p) {
		s.next++
		s.buf = fmt.Appendf(s.buf, "line %d\n", s.next)
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	s.count += int64(n)
	return n, nil
}

// A file over watch.ReadWholeMax is read only as far as the lines shown: a page
// of three lines of a file of gigabytes reads one buffer, not the file.
func TestReadFileBigReadsOnlyThePage(t *testing.T) {
	for _, tc := range []struct {
		offset, limit int
		want          string
	}{
		{1, 3, "     1\tline 1\n     2\tline 2\n     3\tline 3\n[truncated: showing lines 1-3 of a file of 10240 MiB, too large to count its lines; use offset/limit to read more]"},
		{100000, 1, "100000\tline 100000\n[truncated: showing lines 100000-100000 of a file of 10240 MiB, too large to count its lines; use offset/limit to read more]"},
	} {
		src := &lineSource{}
		res := numberedText(t.Context(), src, "big.txt", tc.offset, tc.limit, 10<<30)
		if res.IsError || res.Output != tc.want || res.Hash != "" || res.Content != "" {
			t.Errorf("offset %d limit %d: %+v, want output %q and no hash", tc.offset, tc.limit, res, tc.want)
		}
		// What was needed (about 14 bytes a line up to the last shown),
		// plus at most one buffer fill.
		if need := int64(tc.offset+tc.limit)*14 + 64<<10; src.count > need {
			t.Errorf("offset %d limit %d: read %d bytes, want at most %d", tc.offset, tc.limit, src.count, need)
		}
	}
	// The output's cap stops it too.
	src := &lineSource{}
	res := numberedText(t.Context(), src, "big.txt", 1, 1<<30, 10<<30)
	if res.IsError || len(res.Output) > maxReadOutput+200 || !strings.Contains(res.Output, "too large to count its lines") {
		t.Errorf("a read to the output cap: error %v, %d bytes, ends %q", res.IsError, len(res.Output), res.Output[max(0, len(res.Output)-150):])
	}
	if src.count > maxReadOutput+128<<10 {
		t.Errorf("a read to the output cap read %d bytes", src.count)
	}
}

// The same through the tool, on a sparse file of a GiB whose head is text:
// what is asked for comes back at once, and a read that runs into the end
// still counts the lines it saw. A binary file that large is described
// from its stat.
func TestReadFileBigSparse(t *testing.T) {
	r, root, _ := newTree(t)
	var head strings.Builder
	for i := 1; i <= 3000; i++ { // more than the sniffed head
		fmt.Fprintf(&head, "row %d\n", i)
	}
	writeFile(t, filepath.Join(root, "big.txt"), head.String())
	writeFile(t, filepath.Join(root, "big.bin"), "")
	for _, name := range []string{"big.txt", "big.bin"} {
		if err := os.Truncate(filepath.Join(root, name), 1<<30); err != nil {
			t.Fatal(err)
		}
	}
	ts := NewToolset(r)
	res := call(t, ts, "read_file", `{"path":"big.txt","offset":999,"limit":2}`)
	want := "   999\trow 999\n  1000\trow 1000\n[truncated: showing lines 999-1000 of a file of 1024 MiB, too large to count its lines; use offset/limit to read more]"
	if res.IsError || res.Output != want || res.Hash != "" {
		t.Errorf("read_file of a page of a GiB file = %+v, want %q", res, want)
	}
	res = call(t, ts, "read_file", `{"path":"big.bin"}`)
	if res.IsError || res.Output != "big.bin is a binary file of 1073741824 bytes; its content is not shown." || res.Hash != "" {
		t.Errorf("read_file of a GiB of zeros = %+v", res)
	}
}
