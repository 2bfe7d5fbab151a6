package sim

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strconv"
	"strings"
	"testing"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func imagePart(url string) map[string]any {
	return map[string]any{"type": "input_image", "image_url": url, "detail": "auto"}
}

// The scripted model says what it saw, in a user message and in a tool's output list.
func TestScriptSeesImages(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	img := pngBytes(t, 7, 5)
	user := map[string]any{"type": "message", "role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "what is this"}, imagePart(dataURL("image/png", img))}}
	evs := c.create(map[string]any{"input": []any{user}})
	completed(t, evs)
	want := "You said: what is this\n[saw 1 image: image/png 7x5 (" + strconv.Itoa(len(img)) + " bytes)]"
	if got := textOf(evs); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}

	// A tool's output list: input_text + input_image.
	call := map[string]any{"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": `{"path":"a.png"}`}
	out := map[string]any{"type": "function_call_output", "call_id": "c1", "output": []any{
		map[string]any{"type": "input_text", "text": "a.png: PNG image"}, imagePart(dataURL("image/png", img)), imagePart(dataURL("image/png", pngBytes(t, 3, 3)))}}
	evs = c.create(map[string]any{"input": []any{userMsg("read a.png"), call, out}, "tools": []any{fnTool("read_file")}})
	completed(t, evs)
	if got := textOf(evs); !strings.HasPrefix(got, "I called read_file 1 time(s). Last result:\na.png: PNG image\n[saw 2 images: image/png 7x5") ||
		!strings.Contains(got, "image/png 3x3") {
		t.Fatalf("answer %q", got)
	}
}

// Images are validated as the real API validates them, with its errors.
func TestImageValidation(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	good := dataURL("image/png", pngBytes(t, 2, 2))
	msg := func(parts ...any) map[string]any {
		return map[string]any{"type": "message", "role": "user", "content": append([]any{map[string]any{"type": "input_text", "text": "x"}}, parts...)}
	}
	output := func(parts ...any) []any {
		return []any{userMsg("x"), map[string]any{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c", "output": parts}}
	}
	prefix := "Invalid 'input[0].content[1].image_url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got "
	cases := []struct {
		name  string
		input []any
		code  string
		param string
		msg   string
	}{
		{"no data prefix", []any{msg(imagePart("aGVsbG8="))}, "invalid_value", "input[0].content[1].image_url", prefix + "a value without the 'data:' prefix."},
		{"bmp", []any{msg(imagePart("data:image/bmp;base64,Qk0="))}, "invalid_value", "input[0].content[1].image_url", prefix + "unsupported MIME type 'image/bmp'."},
		{"empty", []any{msg(imagePart("data:image/png;base64,"))}, "invalid_value", "input[0].content[1].image_url", prefix + "empty base64-encoded bytes."},
		{"bad base64", []any{msg(imagePart("data:image/png;base64,@@@@"))}, "invalid_value", "input[0].content[1].image_url", prefix + "invalid base64-encoded bytes."},
		{"not an image", []any{msg(imagePart(dataURL("image/png", []byte("plain text"))))}, "invalid_image_format", "input[0].content[1].image_url", "You uploaded an unsupported image."},
		{"type mismatch", []any{msg(imagePart(dataURL("image/jpeg", pngBytes(t, 2, 2))))}, "invalid_image_format", "input[0].content[1].image_url", "You uploaded an unsupported image."},
		{"bad detail", []any{msg(map[string]any{"type": "input_image", "image_url": good, "detail": "max"})}, "invalid_value", "input[0].content[1].detail", `Invalid value: "max".`},
		{"no url", []any{msg(map[string]any{"type": "input_image"})}, "missing_required_parameter", "input[0].content[1].image_url", "Missing required parameter"},
		{"assistant image", []any{map[string]any{"type": "message", "role": "assistant", "content": []any{imagePart(good)}}}, "invalid_value", "input[0].content[0].type", "Invalid value: 'input_image'."},
		{"output part type", output(map[string]any{"type": "output_text", "text": "x"}), "invalid_value", "input[2].output[0].type", "Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', and 'input_file'."},
		{"output bad image", output(map[string]any{"type": "input_text", "text": "x"}, imagePart("data:image/gif;base64,")), "invalid_value", "input[2].output[1].image_url", "Invalid 'input[2].output[1].image_url'."},
		{"output object", []any{userMsg("x"), map[string]any{"type": "function_call_output", "call_id": "c", "output": map[string]any{"a": 1}}}, "invalid_type", "input[1].output", "Invalid type for 'input[1].output'"},
	}
	for _, tc := range cases {
		evs := c.create(map[string]any{"input": tc.input})
		if len(evs) != 1 {
			t.Fatalf("%s: events %v, want one error", tc.name, types(evs))
		}
		wantError(t, evs[0], 400, tc.code)
		if e := evs[0].Error; e.Param == nil || *e.Param != tc.param || !strings.HasPrefix(e.Message, tc.msg) {
			t.Errorf("%s: error %s, want param %s and a message starting %q", tc.name, evs[0].raw, tc.param, tc.msg)
		}
	}
	// An http(s) URL is taken on trust; a file_id stands in for image_url.
	completed(t, c.create(map[string]any{"input": []any{msg(imagePart("https://example.com/a.png"), map[string]any{"type": "input_image", "file_id": "file_1"})}}))
	// The same checks on HTTP.
	decodeHTTPError(t, postResponses(t, base, map[string]any{"input": []any{msg(imagePart("data:image/bmp;base64,Qk0="))}}, nil), 400, "invalid_value")
}

// Usage counts an image by its tiles, not by the bytes of its data URL.
func TestImageUsage(t *testing.T) {
	_, base := newSim(t, Options{})
	c := dial(t, base)
	big := pngBytes(t, 1500, 1000) // scaled to 1152×768: 3×2 tiles
	text := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "x"}}}
	plain := completed(t, c.create(map[string]any{"generate": false, "input": []any{text}})).Usage.InputTokens
	withImage := map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "x"}, imagePart(dataURL("image/png", big))}}
	got := completed(t, c.create(map[string]any{"generate": false, "input": []any{withImage}})).Usage.InputTokens
	partBytes := len(`,{"detail":"auto","image_url":"","type":"input_image"}`)
	want := plain + 85 + 170*6 + partBytes/4
	if got < want-2 || got > want+2 {
		t.Errorf("input tokens with a 1500×1000 image = %d, want about %d (text alone %d)", got, want, plain)
	}
	if imageTokens(4096, 8192, "high") != 85+170*6 || imageTokens(100, 100, "low") != 85 || imageTokens(100, 100, "auto") != 255 {
		t.Errorf("imageTokens = %d, %d, %d", imageTokens(4096, 8192, "high"), imageTokens(100, 100, "low"), imageTokens(100, 100, "auto"))
	}
}
