package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of the formats the API accepts
	_ "image/jpeg"
	_ "image/png"
	"strconv"
	"strings"
)

// Images, as the real API takes them: an input_image part, in a message's content or in a
// function_call_output's output list, whose image_url is an http(s) URL (not fetched here) or
// a data URL "data:<mime>;base64,<bytes>" of a PNG, JPEG, GIF or WebP image of at most
// maxImageBytes. Validation answers the real API's errors; usage counts an image by its tiles,
// not by the bytes of its data URL.

// maxImageBytes is the largest image the API takes ("below 20 MB").
const maxImageBytes = 20 << 20

var imageMIMEs = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// contentPartJSON is one part of a message's content or of a function_call_output's list.
type contentPartJSON struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	FileID   json.RawMessage `json:"file_id"`
	Detail   json.RawMessage `json:"detail"`
}

// checkImages validates the images (and the parts around them) of one input item, i being its
// index in the request's input. Items without images cost one scan of their bytes.
func checkImages(i int, item json.RawMessage) *apiError {
	var v struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if !bytes.Contains(item, []byte("input_image")) && !bytes.Contains(item, []byte("function_call_output")) {
		return nil
	}
	if json.Unmarshal(item, &v) != nil {
		return nil
	}
	at := "input[" + strconv.Itoa(i) + "]"
	switch {
	case v.Type == "function_call_output":
		return checkOutputList(at+".output", v.Output)
	case v.Type == "message" || v.Type == "" && v.Role != "":
		var parts []contentPartJSON
		if json.Unmarshal(v.Content, &parts) != nil {
			return nil // a string, or a shape other checks own
		}
		for j, p := range parts {
			if p.Type != "input_image" {
				continue
			}
			param := at + ".content[" + strconv.Itoa(j) + "]"
			if v.Role == "assistant" {
				e := invalidRequest("invalid_value", param+".type",
					"Invalid value: 'input_image'. Supported values are: 'output_text' and 'refusal'.")
				return &e
			}
			if e := checkImagePart(param, p); e != nil {
				return e
			}
		}
	}
	return nil
}

// checkOutputList validates a function_call_output's output: a string, or a list of
// input_text, input_image and input_file parts.
func checkOutputList(param string, raw json.RawMessage) *apiError {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var parts []contentPartJSON
	if json.Unmarshal(raw, &parts) != nil {
		e := invalidRequest("invalid_type", param,
			"Invalid type for '%s': expected one of a string or an array of input content parts.", param)
		return &e
	}
	for j, p := range parts {
		at := param + "[" + strconv.Itoa(j) + "]"
		switch p.Type {
		case "input_text":
			var text string
			if json.Unmarshal(p.Text, &text) != nil {
				e := invalidRequest("invalid_type", at+".text", "Invalid type for '%s.text': expected a string.", at)
				return &e
			}
		case "input_image":
			if e := checkImagePart(at, p); e != nil {
				return e
			}
		case "input_file":
		default:
			e := invalidRequest("invalid_value", at+".type",
				"Invalid value: '%s'. Supported values are: 'input_text', 'input_image', and 'input_file'.", p.Type)
			return &e
		}
	}
	return nil
}

// checkImagePart validates one input_image part at param.
func checkImagePart(param string, p contentPartJSON) *apiError {
	if len(p.Detail) > 0 && !isNull(p.Detail) {
		var d string
		_ = json.Unmarshal(p.Detail, &d)
		if d != "auto" && d != "low" && d != "high" {
			e := invalidRequest("invalid_value", param+".detail",
				"Invalid value: %s. Supported values are: 'low', 'high', and 'auto'.", p.Detail)
			return &e
		}
	}
	if len(p.ImageURL) == 0 || isNull(p.ImageURL) {
		if len(p.FileID) > 0 && !isNull(p.FileID) {
			return nil
		}
		e := invalidRequest("missing_required_parameter", param+".image_url",
			"Missing required parameter: '%s.image_url'.", param)
		return &e
	}
	var url string
	if json.Unmarshal(p.ImageURL, &url) != nil {
		e := invalidRequest("invalid_type", param+".image_url", "Invalid type for '%s.image_url': expected a string.", param)
		return &e
	}
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") {
		return nil // the real API fetches it; the simulator takes it on trust
	}
	if _, _, why := parseDataURL(url); why != "" {
		e := invalidRequest("invalid_value", param+".image_url",
			"Invalid '%s.image_url'. Expected a base64-encoded data URL with an image MIME type "+
				"(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got %s.", param, why)
		return &e
	}
	if _, _, ok := imageDims(url); !ok {
		e := apiError{Status: 400, Type: "invalid_request_error", Code: "invalid_image_format", Param: param + ".image_url",
			Message: "You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp']."}
		return &e
	}
	return nil
}

// parseDataURL splits a data URL into its MIME type and decoded bytes; why says what is wrong
// ("" when nothing is), in the words the real API's error uses after "but got".
func parseDataURL(url string) (mime string, data []byte, why string) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return "", nil, "a value without the 'data:' prefix"
	}
	mime, payload, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return "", nil, "a value that is not base64-encoded"
	}
	if !contains(imageMIMEs, mime) {
		return "", nil, fmt.Sprintf("unsupported MIME type '%s'", mime)
	}
	if payload == "" {
		return "", nil, "empty base64-encoded bytes"
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, "invalid base64-encoded bytes"
	}
	return mime, data, ""
}

// imageDims decodes a data URL's image header: width and height, false when the bytes are not
// an image of the type the URL names or are over maxImageBytes.
func imageDims(url string) (w, h int, ok bool) {
	mime, data, why := parseDataURL(url)
	if why != "" || len(data) > maxImageBytes {
		return 0, 0, false
	}
	if mime == "image/webp" {
		return webpDims(data)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || "image/"+format != mime || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpDims reads a WebP file's canvas size from its VP8, VP8L or VP8X header.
func webpDims(b []byte) (int, int, bool) {
	if len(b) < 30 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, false
	}
	switch string(b[12:16]) {
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		w, h := int(binary.LittleEndian.Uint16(b[26:28])&0x3fff), int(binary.LittleEndian.Uint16(b[28:30])&0x3fff)
		return w, h, w > 0 && h > 0
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	case "VP8X":
		return int(b[24]) | int(b[25])<<8 | int(b[26])<<16 + 1, int(b[27]) | int(b[28])<<8 | int(b[29])<<16 + 1, true
	}
	return 0, 0, false
}

// imageTokens is what an image costs in input tokens, as the API counts it for GPT-4o-class
// models: 85 at low detail, else 85 + 170 per 512-pixel tile once the image is scaled to fit
// 2048×2048 and then to a shortest side of 768.
func imageTokens(w, h int, detail string) int {
	if detail == "low" {
		return 85
	}
	fw, fh := float64(w), float64(h)
	if m := max(fw, fh); m > 2048 {
		fw, fh = fw*2048/m, fh*2048/m
	}
	if m := min(fw, fh); m > 768 {
		fw, fh = fw*768/m, fh*768/m
	}
	tiles := ((int(fw) + 511) / 512) * ((int(fh) + 511) / 512)
	return 85 + 170*tiles
}

// itemImages lists the images an item carries (its user content, or its output list) as
// (data URL, detail) pairs, in order.
func itemImages(item json.RawMessage) []contentPartJSON {
	if !bytes.Contains(item, []byte("input_image")) {
		return nil
	}
	var v struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if json.Unmarshal(item, &v) != nil {
		return nil
	}
	var out []contentPartJSON
	for _, raw := range []json.RawMessage{v.Content, v.Output} {
		var parts []contentPartJSON
		if json.Unmarshal(raw, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p.Type == "input_image" {
				out = append(out, p)
			}
		}
	}
	return out
}

// itemSize is what an input item counts for in usage, in bytes at four a token: its JSON,
// except that each image's data URL counts as the image's tokens.
func itemSize(item json.RawMessage) int {
	n := len(item)
	for _, p := range itemImages(item) {
		var url, detail string
		_ = json.Unmarshal(p.ImageURL, &url)
		_ = json.Unmarshal(p.Detail, &detail)
		w, h, ok := imageDims(url)
		if !ok {
			w, h = 1024, 1024
		}
		n += 4*imageTokens(w, h, detail) - len(p.ImageURL)
	}
	return n
}

// describeImages is what the scripted model says it saw: "1 image: image/png 7x5 (92 bytes)".
func describeImages(parts []contentPartJSON) string {
	descs := make([]string, 0, len(parts))
	for _, p := range parts {
		var url string
		_ = json.Unmarshal(p.ImageURL, &url)
		mime, data, why := parseDataURL(url)
		w, h, _ := imageDims(url)
		switch {
		case why == "":
			descs = append(descs, fmt.Sprintf("%s %dx%d (%d bytes)", mime, w, h, len(data)))
		default:
			descs = append(descs, url)
		}
	}
	noun := "images"
	if len(parts) == 1 {
		noun = "image"
	}
	return fmt.Sprintf("%d %s: %s", len(parts), noun, strings.Join(descs, ", "))
}
