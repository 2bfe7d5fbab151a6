package session_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

func encodePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Images in a user's message and in a tool's output reach the model as
// input_image parts, are stored as sent, and go out again intact when a
// reopened conversation re-warms with the whole transcript (the simulator
// validates them as the real API would).
func TestImagesInTheTranscript(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	shot := encodePNG(t, 9, 2)
	if err := os.WriteFile(filepath.Join(e.root, "shot.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.open("s1")
	warm(t, c)

	pasted := encodePNG(t, 3, 4)
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := session.UserMessage("see this", session.Image{MIME: "image/png", Data: pasted})
	if _, err := c.Prompt(ctx, []json.RawMessage{msg}, rec); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("You said: see this\n[saw 1 image: image/png 3x4 (%d bytes)]", len(pasted)); rec.Text_() != want {
		t.Fatalf("answer %q, want %q", rec.Text_(), want)
	}
	wantMsg := `{"type":"message","role":"user","content":[{"type":"input_text","text":"see this"},` +
		`{"type":"input_image","image_url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(pasted) + `","detail":"auto"}]}`
	if string(msg) != wantMsg {
		t.Errorf("UserMessage = %s\nwant %s", msg, wantMsg)
	}

	rec = newRecorder()
	prompt(t, c, "read shot.png", rec)
	if want := fmt.Sprintf("[saw 1 image: image/png 9x2 (%d bytes)]", len(shot)); !strings.HasSuffix(rec.Text_(), want) {
		t.Fatalf("answer %q, want it to end %q", rec.Text_(), want)
	}
	items, err := e.db.Items().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, it := range items {
		if it.Type == "function_call_output" {
			out = string(it.Data)
		}
	}
	wantOut := `"output":[{"type":"input_text","text":"shot.png: PNG image, 9×2 pixels, ` + fmt.Sprintf("%d B", len(shot)) +
		`. The image follows."},{"type":"input_image","image_url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(shot) + `","detail":"auto"}]`
	if !strings.Contains(out, wantOut) {
		t.Errorf("stored function_call_output %s\nwant it to hold %s", out, wantOut)
	}

	// Reopened (a restart): the re-warm sends the whole transcript, images
	// included, and the next prompt chains on it.
	n := len(e.sim.Received())
	c.Close()
	c = e.reopen("s1")
	warm(t, c)
	prompt(t, c, "again", newRecorder())
	recs := e.wait(n + 2)
	full, next := recs[n], recs[n+1]
	if full.Generate == nil || *full.Generate || full.Outcome != full.ResponseID {
		t.Fatalf("re-warm: generate %v outcome %q", full.Generate, full.Outcome)
	}
	images := 0
	for _, it := range full.Input {
		images += bytes.Count(it, []byte(`"type":"input_image"`))
	}
	if images != 2 {
		t.Errorf("the re-warm carried %d images, want 2", images)
	}
	if next.PreviousResponseID != full.ResponseID {
		t.Errorf("the prompt after the re-warm did not chain on it")
	}
}
