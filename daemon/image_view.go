package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
)

// How editors are shown the images of a session: a user's as a
// user_message_chunk with image content, a tool's as image content of its
// tool_call_update after the text, live and in session/load's replay alike.

// maxViewImage bounds an image shown to editors, decoded: a larger one (the
// model gets it all the same) is named in a text block instead. Its base64
// (2.7 MB) leaves most of an editor's outbox (outboxMaxBytes) to the text
// streaming beside it, so an image never gets a slightly slow editor
// disconnected.
const maxViewImage = 2 << 20

// imageView is the ACP block that shows an image given as base64 text.
func imageView(mime, b64 string) acp.ContentBlock {
	if n := decodedLen(b64); n > maxViewImage {
		return acp.TextBlock(fmt.Sprintf("[%s image of %s, too large to show here]", mime, workspace.FormatBytes(int64(n))))
	}
	return acp.ImageBlock(b64, mime)
}

// imageViews shows images the session is sending to the model.
func imageViews(images []session.Image) []acp.ContentBlock {
	var out []acp.ContentBlock
	for _, im := range images {
		if len(im.Data) > maxViewImage {
			out = append(out, acp.TextBlock(fmt.Sprintf("[%s image of %s, too large to show here]", im.MIME, workspace.FormatBytes(int64(len(im.Data))))))
			continue
		}
		out = append(out, acp.ImageBlock(base64.StdEncoding.EncodeToString(im.Data), im.MIME))
	}
	return out
}

// imagePart is an input_image part of a stored item, or an input_text one.
type imagePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// dataURLView is the block that shows a stored input_image's data URL; an
// http(s) URL, which hearth never sends, shows as a link.
func dataURLView(url string) acp.ContentBlock {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if mime, b64, ok := strings.Cut(rest, ";base64,"); ok {
			return imageView(mime, b64)
		}
	}
	return acp.ResourceLinkBlock("image", url)
}

// toolOutput reads a stored function_call_output's output: a string, or a
// list of input_text parts (joined) and input_image parts (shown as images).
func toolOutput(raw json.RawMessage) (string, []acp.ContentBlock) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var parts []imagePart
	if json.Unmarshal(raw, &parts) != nil {
		return "", nil // an output of another shape shows as empty
	}
	var texts []string
	var images []acp.ContentBlock
	for _, p := range parts {
		switch p.Type {
		case "input_text":
			texts = append(texts, p.Text)
		case "input_image":
			images = append(images, dataURLView(p.ImageURL))
		}
	}
	return strings.Join(texts, "\n"), images
}

// userImageUpdates are the user_message_chunk notifications that show the
// images of a stored user message, after its text; none for other items.
func userImageUpdates(sessionID string, item json.RawMessage) []json.RawMessage {
	if !bytes.Contains(item, []byte(`"input_image"`)) {
		return nil // nearly every item: no decode
	}
	var m struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(item, &m) != nil || m.Type != "message" || m.Role != "user" {
		return nil
	}
	var parts []imagePart
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	var out []json.RawMessage
	for _, p := range parts {
		if p.Type != "input_image" {
			continue
		}
		b, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(sessionID), Update: acp.UpdateUserMessage(dataURLView(p.ImageURL))})
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}
