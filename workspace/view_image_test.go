package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// view_image returns a workspace image for the model to see, and fails,
// saying why, where read_file would describe: a file that is not an image,
// one over the cap, a broken header, a directory, a link out of the root.
func TestViewImage(t *testing.T) {
	r, root, outside := newTree(t)
	ts := NewToolset(r)
	shot := testPNG(t, 7, 5)
	writeFile(t, filepath.Join(root, "docs", "shot.png"), string(shot))
	res := call(t, ts, "view_image", `{"path":"docs/shot.png"}`)
	if res.IsError || res.Image == nil || !bytes.Equal(res.Image.Data, shot) || res.Image.MIME != "image/png" {
		t.Fatalf("view_image docs/shot.png = %+v, want the image", res)
	}
	if res.Output != "docs/shot.png: PNG image, 7×5 pixels, "+FormatBytes(int64(len(shot)))+". The image follows." ||
		res.Title != "View docs/shot.png" || res.Hash != sha(string(shot)) || len(res.Locations) != 1 || res.Locations[0] != "docs/shot.png" {
		t.Errorf("view_image docs/shot.png: output %q title %q hash %s locations %v", res.Output, res.Title, res.Hash, res.Locations)
	}
	// Relative to the session's working directory.
	if res := call(t, ts.In("docs"), "view_image", `{"path":"shot.png"}`); res.IsError || res.Title != "View shot.png" || res.Locations[0] != "docs/shot.png" {
		t.Errorf("view_image from docs = %+v", res)
	}

	big := filepath.Join(root, "huge.png")
	writeFile(t, big, string(testPNG(t, 2, 2)))
	if err := os.Truncate(big, MaxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "notes.png"), "not an image\n")
	writeFile(t, filepath.Join(root, "broken.png"), "\x89PNG\r\n\x1a\nthis is no header at all")
	writeFile(t, filepath.Join(outside, "secret.png"), string(shot))
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(root, "link.png")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"huge.png", "huge.png is 20.0 MiB, larger than the 20 MiB of an image hearth sends to the model"},
		{"notes.png", "notes.png: not a PNG, JPEG, GIF or WebP image; view_image shows PNG, JPEG, GIF and WebP images (use read_file for text)"},
		{"broken.png", "looks like a PNG image but its header is unreadable"},
		{"docs", `"docs" is a directory, not an image`},
		{"missing.png", `file "missing.png" does not exist`},
		{"../outside/secret.png", "outside the workspace"},
		{"link.png", "outside the workspace"},
	} {
		res := call(t, ts, "view_image", mustJSON(t, map[string]string{"path": tc.path}))
		if !res.IsError || res.Image != nil || !strings.Contains(res.Output, tc.want) {
			t.Errorf("view_image %s = %+v, want an error saying %q", tc.path, res, tc.want)
		}
	}
}
