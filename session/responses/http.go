package responses

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// httpLink sends each request as POST {base}/responses with stream:true
// and reads its SSE stream: the fallback when the WebSocket is refused.
// With store:false the server keeps nothing between requests, so every
// request carries the full transcript. Created by the Client at the
// fallback; close cancels in-flight requests and waits for their readers.
type httpLink struct {
	cfg     func() Config // the client's current configuration
	hc      *http.Client
	created time.Time

	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup // one reader per in-flight request

	headers func(http.Header) // told every answer's headers (the rate limits); nil: none
}

func newHTTPLink(cfg func() Config) *httpLink {
	ctx, cancel := context.WithCancel(context.Background())
	h := &httpLink{cfg: cfg, hc: &http.Client{}, created: time.Now(), ctx: ctx, cancel: cancel}
	return h
}

func (h *httpLink) Name() string                          { return "http" }
func (h *httpLink) Transport() string                     { return "http" }
func (h *httpLink) Acquire(context.Context, string) error { return nil } // turns are serial per conversation
func (h *httpLink) Release(string)                        {}
func (h *httpLink) Cached(string) string                  { return "" }
func (h *httpLink) Alive() bool                           { return h.ctx.Err() == nil }
func (h *httpLink) refusedLanes(string) bool              { return false } // no stream_id over HTTP
func (h *httpLink) Abort(st *Stream, _ bool) {
	if st.cancel != nil {
		st.cancel()
	}
}

func (h *httpLink) close() {
	h.cancel()
	h.wg.Wait()
}

// httpBody turns a WebSocket response.create frame into the HTTP body:
// without type, stream_id and generate, with stream:true.
func httpBody(frame []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(frame, &m); err != nil {
		return nil, fmt.Errorf("request for HTTP: %w", err)
	}
	for _, k := range []string{"type", "stream_id", "generate", "previous_response_id"} {
		delete(m, k)
	}
	m["stream"] = json.RawMessage("true")
	return json.Marshal(m)
}

func (h *httpLink) Send(ctx context.Context, lane string, frame []byte) (*Stream, error) {
	body, err := httpBody(frame)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(h.cfg().BaseURL, "/") + "/responses"
	rctx, rcancel := context.WithCancel(h.ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		rcancel()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if h.cfg().APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg().APIKey)
	}
	st := newStream(h, lane)
	st.cancel = rcancel
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer rcancel()
		h.read(req, st)
	}()
	return st, nil
}

// read performs the request and feeds its events to st until the terminal
// event, an error status, or the end of the body.
func (h *httpLink) read(req *http.Request, st *Stream) {
	resp, err := h.hc.Do(req)
	if ue := unreachable(h.cfg().BaseURL, err); ue != nil {
		st.fail(ue)
		return
	}
	if err != nil {
		st.fail(fmt.Errorf("%w: POST %s: %s", ErrConnectionLost, safeURL(req.URL.String()), strings.ReplaceAll(err.Error(), req.URL.String(), safeURL(req.URL.String()))))
		return
	}
	defer resp.Body.Close()
	if h.headers != nil {
		h.headers(resp.Header)
	}
	if resp.StatusCode != http.StatusOK {
		st.push(httpErrorEvent(resp))
		return
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data bytes.Buffer
	events := newEventReader(h.cfg().MaxMessage)
	// As on a WebSocket (readGate), a model's deltas are read in batches:
	// what has arrived is handed on before a read that would wait, and
	// after a delta that came at a model's pace that read waits for the
	// window first. The socket has no low-water mark here (the HTTP
	// transport owns it): the batch saves the wake-ups of the turn and of
	// the editors' writers, not the reads'.
	gate := newReadGate(h.cfg().ReadWindow)
	defer st.handOn() // whatever ends the stream: the owner hears of what was queued
	for {
		if !lineBuffered(r) {
			st.handOn()
			gate.pause()
		}
		line, err := r.ReadBytes('\n')
		if limit := h.cfg().MaxMessage; int64(data.Len()+len(line)) > limit {
			st.fail(&EventTooLargeError{Size: int64(data.Len() + len(line)), Limit: limit})
			return
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && data.Len() > 0: // end of one event
			e, perr := events.read(bytes.NewReader(data.Bytes()))
			data.Reset()
			if perr != nil {
				st.fail(fmt.Errorf("%w: %v", ErrConnectionLost, perr))
				return
			}
			st.queue(e)
			if e.Type == "response.output_text.delta" && st.paced() {
				gate.delta()
			}
			if isTerminal(e.Type) {
				return
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			st.fail(fmt.Errorf("%w: SSE stream ended before a terminal event: %v", ErrConnectionLost, err))
			return
		}
	}
}

// lineBuffered reports whether r holds a whole line already: reading it
// does not wait.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// httpErrorEvent turns an HTTP error response into the error event a
// WebSocket would have sent.
func httpErrorEvent(resp *http.Response) *Event {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error *errorBody `json:"error"`
	}
	e := &Event{Type: "error", Status: resp.StatusCode}
	if json.Unmarshal(b, &body) == nil && body.Error != nil {
		e.Error = body.Error
	} else {
		e.Error = &errorBody{Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))}
	}
	if resp.StatusCode == http.StatusUnauthorized {
		e.Error.Message = "API key rejected (HTTP 401): check OPENAI_API_KEY"
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.resetAt = refusedUntil(resp.Header, time.Now())
	}
	return e
}
