package daemon

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// maxEditorMessage bounds one frame from an editor: a prompt carrying two
// images at workspace.MaxImageBytes, base64-encoded, still arrives whole, so
// an image over the cap gets promptContent's error naming the cap rather
// than the framing's "message too large".
const maxEditorMessage = 64 << 20

// promptContent is a session/prompt's content: the text the user's message
// carries and its images, checked.
type promptContent struct {
	text   string
	images []session.Image
}

// readPrompt turns the prompt's content blocks into the user's message: text,
// resource links and embedded resources as text, image blocks as images. An
// image must be PNG, JPEG, GIF or WebP by its content and at most
// workspace.MaxImageBytes; anything else is refused with invalid params
// naming the block, before anything is stored.
func readPrompt(blocks []acp.ContentBlock) (promptContent, error) {
	var p promptContent
	var parts []string
	for i, b := range blocks {
		field := fmt.Sprintf("prompt[%d]", i)
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "@"+b.ResourceLink.Uri)
		case b.Resource != nil:
			raw, _ := json.Marshal(b.Resource.Resource)
			parts = append(parts, string(raw))
		case b.Image != nil:
			im, err := promptImage(field, b.Image)
			if err != nil {
				return promptContent{}, err
			}
			p.images = append(p.images, im)
		default:
			return promptContent{}, rpc.InvalidParams(field, "unsupported content block: hearth accepts text, image, resource and resource_link")
		}
	}
	p.text = strings.Join(parts, "\n")
	if strings.TrimSpace(p.text) == "" && len(p.images) == 0 {
		return promptContent{}, rpc.InvalidParams("prompt", "is empty")
	}
	return p, nil
}

// promptImage checks one ACP image block. The size is checked before the
// data is decoded; the type the model is told is the one the content shows
// (an editor may guess the MIME type from a name).
func promptImage(field string, b *acp.ContentBlockImage) (session.Image, error) {
	if !isImageMIME(b.MimeType) {
		return session.Image{}, rpc.InvalidParams(field+".mimeType", "%q is not an image type hearth sends to the model; it accepts %s",
			b.MimeType, strings.Join(workspace.ImageFormats, ", "))
	}
	if b.Data == "" {
		return session.Image{}, rpc.InvalidParams(field+".data", "is empty: hearth needs the image's bytes (it does not fetch a uri)")
	}
	if n := decodedLen(b.Data); n > workspace.MaxImageBytes {
		return session.Image{}, rpc.InvalidParams(field, "the image is %s, over hearth's limit of %s per image; send a smaller or cropped one",
			workspace.FormatBytes(int64(n)), workspace.FormatBytes(workspace.MaxImageBytes))
	}
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return session.Image{}, rpc.InvalidParams(field+".data", "is not valid base64: %v", err)
	}
	im, err := workspace.DecodeImage(data)
	if err != nil {
		return session.Image{}, rpc.InvalidParams(field+".data", "%v (mimeType says %s)", err, b.MimeType)
	}
	return session.Image{MIME: im.MIME, Data: im.Data}, nil
}

func isImageMIME(mime string) bool {
	for _, m := range workspace.ImageFormats {
		if strings.EqualFold(mime, m) {
			return true
		}
	}
	return false
}

// decodedLen is the number of bytes the base64 text s decodes to (about:
// line breaks count as data), without decoding it.
func decodedLen(s string) int {
	n := len(s) / 4 * 3
	for i := len(s) - 1; i >= 0 && i >= len(s)-2 && s[i] == '='; i-- {
		n--
	}
	return n
}

// title is the session's title from its first prompt: its text, or
// "[image]" for a prompt of images only.
func (p promptContent) title() string {
	if strings.TrimSpace(p.text) == "" {
		return "[image]"
	}
	return title(p.text)
}
