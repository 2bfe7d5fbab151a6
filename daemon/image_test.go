package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
)

func pngImage(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// userImages returns the image blocks of the user_message_chunks received.
func userImages(ups []acp.SessionUpdate) []*acp.ContentBlockImage {
	var out []*acp.ContentBlockImage
	for _, u := range ups {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Image != nil {
			out = append(out, u.UserMessageChunk.Content.Image)
		}
	}
	return out
}

// toolImages returns the image blocks of the tool_call_updates received.
func toolImages(ups []acp.SessionUpdate) []*acp.ContentBlockImage {
	var out []*acp.ContentBlockImage
	for _, u := range ups {
		if u.ToolCallUpdate == nil {
			continue
		}
		for _, c := range u.ToolCallUpdate.Content {
			if c.Content != nil && c.Content.Content.Image != nil {
				out = append(out, c.Content.Content.Image)
			}
		}
	}
	return out
}

// A pasted image reaches the model as an input_image part of the user's
// message, other editors see it live, and session/load shows it again.
// read_file of an image returns it to the model as an input_image part of
// the function_call_output, and the editors see it in the tool's result.
func TestImagesReachTheModelAndTheEditors(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	var init acp.InitializeResponse
	e.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init)
	if !init.AgentCapabilities.PromptCapabilities.Image {
		t.Fatalf("initialize does not advertise promptCapabilities.image: %+v", init.AgentCapabilities.PromptCapabilities)
	}
	id := e.newSession(td.root)
	other := td.connect()
	other.initialize()
	other.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)

	pasted := pngImage(t, 6, 4)
	b64 := base64.StdEncoding.EncodeToString(pasted)
	var r acp.PromptResponse
	// The editor guessed the type wrong: the content says PNG, and the model is told so.
	e.must(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{
		acp.TextBlock("what is in this picture"), acp.ImageBlock(b64, "image/jpeg")}}, &r)
	saw := fmt.Sprintf("[saw 1 image: image/png 6x4 (%d bytes)]", len(pasted))
	if got := agentText(e.updates()); !strings.Contains(got, "You said: what is in this picture") || !strings.Contains(got, saw) {
		t.Fatalf("answer %q, want the model to have seen %s", got, saw)
	}
	part := `{"type":"input_image","image_url":"data:image/png;base64,` + b64 + `","detail":"auto"}`
	recs := td.sim.Received()
	if in := recs[len(recs)-1].Input; len(in) == 0 || !bytes.Contains(in[len(in)-1], []byte(part)) {
		t.Fatalf("the request's last input item is not the user's message with the image part %s…", part[:60])
	}
	other.waitFor("the pasted image", func(ups []acp.SessionUpdate) bool { return len(userImages(ups)) == 1 })
	if im := userImages(other.updates())[0]; im.MimeType != "image/png" || im.Data != b64 {
		t.Errorf("the other editor was shown a %s image of %d base64 bytes", im.MimeType, len(im.Data))
	}

	// read_file of an image.
	shot := pngImage(t, 5, 3)
	if err := os.WriteFile(filepath.Join(td.root, "shot.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	e.forget()
	e.prompt(id, "read shot.png")
	saw = fmt.Sprintf("[saw 1 image: image/png 5x3 (%d bytes)]", len(shot))
	if got := agentText(e.updates()); !strings.Contains(got, "shot.png: PNG image, 5×3 pixels") || !strings.Contains(got, saw) {
		t.Fatalf("answer %q, want the model to have seen %s", got, saw)
	}
	shotB64 := base64.StdEncoding.EncodeToString(shot)
	var output json.RawMessage
	for _, rec := range td.sim.Received() {
		for _, it := range rec.Input {
			var v struct {
				Type   string          `json:"type"`
				Output json.RawMessage `json:"output"`
			}
			if json.Unmarshal(it, &v) == nil && v.Type == "function_call_output" {
				output = v.Output
			}
		}
	}
	var parts []struct {
		Type     string `json:"type"`
		ImageURL string `json:"image_url"`
	}
	if err := json.Unmarshal(output, &parts); err != nil ||
		len(parts) != 2 || parts[0].Type != "input_text" || parts[1].Type != "input_image" || parts[1].ImageURL != "data:image/png;base64,"+shotB64 {
		t.Fatalf("function_call_output.output = %.300s, want [input_text, input_image]", output)
	}
	if ims := toolImages(e.updates()); len(ims) != 1 || ims[0].Data != shotB64 || ims[0].MimeType != "image/png" {
		t.Errorf("the editor was shown %d tool images, want the file's", len(ims))
	}
	seen, err := td.d.db.Memory().SeenFiles(context.Background(), string(id))
	if err != nil || seen["shot.png"].Hash == "" || seen["shot.png"].Content != nil {
		t.Errorf("read set entry for shot.png = %+v, %v; want its hash and no copy to diff", seen["shot.png"], err)
	}

	// The next prompt stays incremental: the images are in the baseline.
	e.prompt(id, "thanks")
	recs = td.sim.Received()
	if last := recs[len(recs)-1]; last.PreviousResponseID == "" {
		t.Errorf("the prompt after the images went out full")
	}

	// session/load shows both images again, from the store.
	late := td.connect()
	late.initialize()
	late.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	ups := late.updates()
	if ims := userImages(ups); len(ims) != 1 || ims[0].Data != b64 || ims[0].MimeType != "image/png" {
		t.Errorf("replay shows %d user images, want the pasted one", len(ims))
	}
	if ims := toolImages(ups); len(ims) != 1 || ims[0].Data != shotB64 {
		t.Errorf("replay shows %d tool images, want the file's", len(ims))
	}
	var texts []string
	for _, u := range ups {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			texts = append(texts, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if strings.Join(texts, "|") != "what is in this picture|read shot.png|thanks" {
		t.Errorf("replayed user texts %q", texts)
	}
}

// An image the model cannot take is refused with invalid params naming the
// block and the rule, before anything is stored; the session goes on.
func TestPromptImageRefused(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	over := append(pngImage(t, 2, 2), make([]byte, workspace.MaxImageBytes)...)
	cases := []struct {
		name  string
		block acp.ContentBlock
		want  string
	}{
		{"over the cap", acp.ImageBlock(base64.StdEncoding.EncodeToString(over), "image/png"),
			"prompt[1]: the image is 20.0 MiB, over hearth's limit of 20 MiB per image"},
		{"bmp", acp.ImageBlock("Qk0=", "image/bmp"),
			`prompt[1].mimeType: "image/bmp" is not an image type hearth sends to the model; it accepts image/png, image/jpeg, image/gif, image/webp`},
		{"not base64", acp.ImageBlock("@@@", "image/png"), "prompt[1].data: is not valid base64"},
		{"not an image", acp.ImageBlock(base64.StdEncoding.EncodeToString([]byte("hello")), "image/png"),
			"prompt[1].data: not a PNG, JPEG, GIF or WebP image (mimeType says image/png)"},
		{"broken header", acp.ImageBlock(base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nbroken")), "image/png"),
			"prompt[1].data: looks like a PNG image but its header is unreadable"},
		{"uri only", acp.ContentBlock{Image: &acp.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: acp.Ptr("file:///tmp/x.png")}},
			"prompt[1].data: is empty"},
	}
	for _, tc := range cases {
		// The 27 MiB frame of the first case takes ~11 s to encode and
		// decode under -race on an idle machine: more than e.call's bound
		// when the other packages' tests share the cores.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := e.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("look"), tc.block}}, nil)
		cancel()
		var we *jsonrpc2.Error
		if !errors.As(err, &we) || we.Code != jsonrpc2.InvalidParams || !strings.Contains(we.Message, tc.want) {
			t.Errorf("%s: prompt answered %v, want invalid params saying %q", tc.name, err, tc.want)
		}
	}
	if got := e.prompt(id, "fine"); got != acp.StopReasonEndTurn {
		t.Fatalf("prompt after the refusals stopped with %s", got)
	}
	items, err := td.d.db.Items().List(context.Background(), string(id))
	for len(items) > 0 && items[0].TurnID == 0 {
		items = items[1:] // the session's initial items (its environment)
	}
	if err != nil || len(items) == 0 || !bytes.Contains(items[0].Data, []byte(`"text":"fine"`)) {
		t.Fatalf("the session's first item is not the accepted prompt: %v %d", err, len(items))
	}
	for _, it := range items {
		if bytes.Contains(it.Data, []byte("look")) {
			t.Errorf("a refused prompt was stored: %.100s", it.Data)
		}
	}
}

// An image over maxViewImage is named to editors, not shown: the model gets
// it all the same.
func TestImageViewBound(t *testing.T) {
	small := base64.StdEncoding.EncodeToString(make([]byte, 3000))
	if b := imageView("image/png", small); b.Image == nil || b.Image.Data != small {
		t.Errorf("a small image is not shown as an image: %+v", b)
	}
	big := base64.StdEncoding.EncodeToString(make([]byte, maxViewImage+3))
	if b := imageView("image/png", big); b.Image != nil || b.Text == nil || b.Text.Text != "[image/png image of 2.0 MiB, too large to show here]" {
		t.Errorf("an image over the view bound is shown as %+v", b.Text)
	}
	if bs := imageViews([]session.Image{{MIME: "image/gif", Data: make([]byte, maxViewImage+1)}}); len(bs) != 1 || bs[0].Text == nil {
		t.Errorf("imageViews of a large image = %+v", bs)
	}
}
