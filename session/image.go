package session

import "encoding/base64"

// Image is a picture for the model, sent as an input_image part with a
// data URL: in a user's message (UserMessage) or a tool's output
// (ToolResult.Images). The caller has checked it (format, size); a plain
// value.
type Image struct {
	MIME string // image/png, image/jpeg, image/gif or image/webp
	Data []byte
}

// contentPart is one part of a message's content or of a tool's output:
// input_text (Text) or input_image (ImageURL, Detail).
type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// part is im as an input_image part. detail "auto" lets the model choose the
// resolution; it is sent although it is the default, since some
// implementations of the API require it.
func (im Image) part() contentPart {
	return contentPart{Type: "input_image", ImageURL: "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data), Detail: "auto"}
}
