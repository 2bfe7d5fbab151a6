package workspace

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPNG, testJPEG and testGIF encode a w×h picture with the standard
// library; testWebP builds a lossless WebP header of that size (the tools read
// only the header).
func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, checker(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, checker(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testGIF(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, checker(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testWebP(w, h int) []byte {
	payload := []byte{0x2f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(payload[1:5], uint32(w-1)|uint32(h-1)<<14)
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(b)-8))
	return b
}

func checker(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if (x+y)%2 == 0 {
				m.Set(x, y, color.RGBA{200, 30, 30, 255})
			}
		}
	}
	return m
}

func TestReadFileImage(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)
	files := []struct {
		name, mime, desc string
		data             []byte
	}{
		{"shot.png", "image/png", "PNG image, 7×5 pixels", testPNG(t, 7, 5)},
		{"photo.jpg", "image/jpeg", "JPEG image, 9×4 pixels", testJPEG(t, 9, 4)},
		{"anim.gif", "image/gif", "GIF image, 3×3 pixels", testGIF(t, 3, 3)},
		{"pic.webp", "image/webp", "WebP image, 640×480 pixels", testWebP(640, 480)},
		// Content, not the name, makes an image.
		{"screenshot", "image/png", "PNG image, 2×2 pixels", testPNG(t, 2, 2)},
		{"docs/logo.txt", "image/gif", "GIF image, 4×1 pixels", testGIF(t, 4, 1)},
	}
	for _, f := range files {
		writeFile(t, filepath.Join(root, f.name), string(f.data))
		res := call(t, ts, "read_file", mustJSON(t, map[string]string{"path": f.name}))
		if res.IsError || res.Image == nil {
			t.Fatalf("read_file %s = %+v, want an image", f.name, res)
		}
		if res.Image.MIME != f.mime || !bytes.Equal(res.Image.Data, f.data) {
			t.Errorf("read_file %s: image %s of %d bytes, want %s of %d", f.name, res.Image.MIME, len(res.Image.Data), f.mime, len(f.data))
		}
		if !strings.HasPrefix(res.Output, f.name+": "+f.desc) || !strings.Contains(res.Output, "The image follows") {
			t.Errorf("read_file %s: output %q, want it to start %q", f.name, res.Output, f.name+": "+f.desc)
		}
		if res.Hash != sha(string(f.data)) || res.Title != "Read "+f.name || len(res.Locations) != 1 {
			t.Errorf("read_file %s: hash %s title %q locations %v", f.name, res.Hash, res.Title, res.Locations)
		}
	}

	// A .png that holds text is text.
	writeFile(t, filepath.Join(root, "fake.png"), "not an image\n")
	if res := call(t, ts, "read_file", `{"path":"fake.png"}`); res.IsError || res.Image != nil || res.Output != "     1\tnot an image\n" {
		t.Errorf("read_file fake.png = %+v, want its text", res)
	}
}

func TestReadFileImageNotSent(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)

	// Over the cap: described, not read at all (so not hashed: it is past
	// watch.ReadWholeMax too), not an error.
	big := filepath.Join(root, "huge.png")
	writeFile(t, big, string(testPNG(t, 2, 2)))
	if err := os.Truncate(big, MaxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	res := call(t, ts, "read_file", `{"path":"huge.png"}`)
	if res.IsError || res.Image != nil || !strings.Contains(res.Output, "larger than the 20 MiB hearth sends to the model") || res.Hash != "" {
		t.Errorf("read_file of an image over the cap = %+v", res)
	}

	// The signature of a PNG with a broken header.
	writeFile(t, filepath.Join(root, "broken.png"), "\x89PNG\r\n\x1a\nthis is no header at all")
	res = call(t, ts, "read_file", `{"path":"broken.png"}`)
	if res.IsError || res.Image != nil || !strings.Contains(res.Output, "looks like a PNG image but its header is unreadable") {
		t.Errorf("read_file of a broken PNG = %+v", res)
	}
	writeFile(t, filepath.Join(root, "short.webp"), "RIFF\x00\x00\x00\x00WEBPVP8L")
	res = call(t, ts, "read_file", `{"path":"short.webp"}`)
	if res.IsError || res.Image != nil || !strings.Contains(res.Output, "truncated WebP header") {
		t.Errorf("read_file of a truncated WebP = %+v", res)
	}
}

// An editor has no text for an image: read_file through one reads the disk
// without asking it.
func TestReadFileImageViaEditorReadsTheDisk(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)
	data := testPNG(t, 3, 2)
	writeFile(t, filepath.Join(root, "ui.png"), string(data))
	ed := &fakeEditor{buffers: map[string]string{filepath.Join(root, "ui.png"): "garbled text of an image"}}
	res := runVia(t, ts, ed.both(), "read_file", `{"path":"ui.png"}`)
	if res.IsError || res.Image == nil || !bytes.Equal(res.Image.Data, data) || res.Buffer {
		t.Fatalf("read_file via editor = %+v, want the image from disk", res)
	}
	if asked := ed.calls(); len(asked) != 0 {
		t.Errorf("the editor was asked %v for an image", asked)
	}
}

func TestDecodeImage(t *testing.T) {
	for _, tt := range []struct {
		data []byte
		want string
	}{
		{[]byte("hello"), "not a PNG, JPEG, GIF or WebP image"},
		{nil, "not a PNG, JPEG, GIF or WebP image"},
		{[]byte("\xff\xd8\xff\xe0junk"), "looks like a JPEG image but its header is unreadable"},
		{[]byte("RIFF\x00\x00\x00\x00WEBPVP8 0123456789abcdef0123"), "bad VP8 start code"},
	} {
		if _, err := DecodeImage(tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeImage(%q) = %v, want %q", tt.data, err, tt.want)
		}
	}
	im, err := DecodeImage(testPNG(t, 12, 34))
	if err != nil || im.MIME != "image/png" || im.Width != 12 || im.Height != 34 {
		t.Errorf("DecodeImage(png 12×34) = %+v, %v", im, err)
	}
}
