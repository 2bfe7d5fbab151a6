package workspace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of the formats the model accepts
	_ "image/jpeg"
	_ "image/png"
)

// MaxImageBytes bounds one image hearth sends to the model, decoded: a
// pasted screenshot (ACP image block) or a file read_file shows as an image.
// The API's own limit per image is 20 MB; every image also stays in the
// transcript and goes out again with each full request, so smaller is better.
const MaxImageBytes = 20 << 20

// ImageFormats are the MIME types of the images the model accepts, in the
// order messages list them.
var ImageFormats = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Image is a picture for the model: its bytes and what its header says.
// A plain value; Data is the caller's.
type Image struct {
	MIME          string // one of ImageFormats, from the content, not a name
	Data          []byte
	Width, Height int // pixels
}

// imageSniffLen is how many leading bytes SniffImage needs.
const imageSniffLen = 16

// SniffImage returns the MIME type of the PNG, JPEG, GIF or WebP image whose
// first bytes are head (16 are enough), or "" when head starts none of them.
// Only the content counts: a name's extension says nothing.
func SniffImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// DecodeImage checks that data is an image the model can be sent — one of
// ImageFormats by its content, its header readable, at most MaxImageBytes —
// and returns it with its size in pixels. The error says what is wrong in
// words a user or the model can act on.
func DecodeImage(data []byte) (Image, error) {
	mime := SniffImage(data)
	if mime == "" {
		return Image{}, fmt.Errorf("not a PNG, JPEG, GIF or WebP image")
	}
	if len(data) > MaxImageBytes {
		return Image{}, fmt.Errorf("the %s image is %s, larger than the %s hearth sends to the model",
			formatName(mime), FormatBytes(int64(len(data))), FormatBytes(MaxImageBytes))
	}
	w, h, err := imageSize(mime, data)
	if err != nil {
		return Image{}, fmt.Errorf("looks like a %s image but its header is unreadable (%v)", formatName(mime), err)
	}
	return Image{MIME: mime, Data: data, Width: w, Height: h}, nil
}

// Describe is the one line the model and the editor read beside an image:
// "PNG image, 640×480 pixels, 12.3 KiB".
func (im Image) Describe() string {
	return fmt.Sprintf("%s image, %d×%d pixels, %s", formatName(im.MIME), im.Width, im.Height, FormatBytes(int64(len(im.Data))))
}

// formatName is "PNG" for "image/png".
func formatName(mime string) string {
	switch mime {
	case "image/jpeg":
		return "JPEG"
	case "image/webp":
		return "WebP"
	case "image/png":
		return "PNG"
	case "image/gif":
		return "GIF"
	}
	return mime
}

// FormatBytes is n in B, KiB or MiB, for messages.
func FormatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// imageSize reads the width and height from the image's header. The
// standard library reads PNG, JPEG and GIF; WebP's three header layouts
// (lossy VP8, lossless VP8L, extended VP8X) are read here.
func imageSize(mime string, data []byte) (int, int, error) {
	if mime == "image/webp" {
		return webpSize(data)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, fmt.Errorf("size %d×%d", cfg.Width, cfg.Height)
	}
	return cfg.Width, cfg.Height, nil
}

// webpSize reads a WebP file's canvas size (RFC 9649).
func webpSize(b []byte) (int, int, error) {
	if len(b) < 30 {
		return 0, 0, fmt.Errorf("truncated WebP header")
	}
	switch string(b[12:16]) {
	case "VP8 ": // lossy: a key frame's start code, then 14-bit sizes
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, fmt.Errorf("bad VP8 start code")
		}
		w := int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
		h := int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
		if w == 0 || h == 0 {
			return 0, 0, fmt.Errorf("size %d×%d", w, h)
		}
		return w, h, nil
	case "VP8L": // lossless: a signature byte, then 14-bit sizes minus one
		if b[20] != 0x2f {
			return 0, 0, fmt.Errorf("bad VP8L signature")
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, nil
	case "VP8X": // extended: 24-bit canvas sizes minus one
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w + 1, h + 1, nil
	}
	return 0, 0, fmt.Errorf("unknown WebP chunk %q", b[12:16])
}
