package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hearthd/hearth/session"
)

// chainClient is the bench's own minimal Responses client for the mode
// hearth does not have: HTTP with store:true, each request chained to the
// previous response by previous_response_id and carrying only the new
// items. It keeps nothing (no SQLite, no editor), so its time above the
// floor is a lower bound for any client of that mode. One per timed turn.
type chainClient struct {
	base  string
	tools readTools
	tr    *http.Transport
}

func (c *chainClient) close() {
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
}

// chainRequest is the body: the settings hearth sends (model, instructions,
// tools, reasoning) with store:true.
type chainRequest struct {
	Model              string            `json:"model"`
	Instructions       string            `json:"instructions"`
	Tools              []json.RawMessage `json:"tools"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	Reasoning          map[string]string `json:"reasoning"`
	Store              bool              `json:"store"`
	Stream             bool              `json:"stream"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Input              []json.RawMessage `json:"input"`
}

// turn runs the tool loop of one prompt and returns the time to the first
// streamed output.
func (c *chainClient) turn(ctx context.Context, prompt string) (time.Duration, error) {
	c.tr = &http.Transport{}
	hc := &http.Client{Transport: c.tr}
	start := time.Now()
	var first time.Duration
	req := chainRequest{Model: "sim-model", Instructions: "bench", Tools: c.tools.Specs(),
		Reasoning: map[string]string{"effort": session.ProfileOf("sim-model").DefaultReasoning, "summary": session.DefaultReasoningSummary},
		Store:     true, Stream: true, Input: []json.RawMessage{session.UserMessage(prompt)}}
	for step := 0; step < 200; step++ {
		resp, err := c.post(ctx, hc, req, func() {
			if first == 0 {
				first = time.Since(start)
			}
		})
		if err != nil {
			return 0, fmt.Errorf("request %d: %w", step+1, err)
		}
		var next []json.RawMessage
		for _, raw := range resp.Output {
			var it struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			if err := json.Unmarshal(raw, &it); err != nil {
				return 0, fmt.Errorf("output item: %w", err)
			}
			if it.Type != "function_call" {
				continue
			}
			res := c.tools.Run(ctx, session.ToolCall{CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
			out, _ := json.Marshal(struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Output string `json:"output"`
			}{"function_call_output", it.CallID, res.Output})
			next = append(next, out)
		}
		if len(next) == 0 {
			return first, nil
		}
		req.PreviousResponseID, req.Input = resp.ID, next
	}
	return 0, fmt.Errorf("the model did not stop after 200 requests")
}

type chainResponse struct {
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Output []json.RawMessage `json:"output"`
}

// post sends one request and reads its SSE stream to the terminal event;
// onOutput is called at each streamed output event.
func (c *chainClient) post(ctx context.Context, hc *http.Client, body chainRequest, onOutput func()) (*chainResponse, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/responses", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Item     json.RawMessage `json:"item"`
			Response *chainResponse  `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("SSE event: %w", err)
		}
		switch ev.Type {
		case "response.reasoning_summary_text.delta", "response.output_text.delta":
			onOutput()
		case "response.output_item.added":
			if bytes.Contains(ev.Item, []byte(`"function_call"`)) {
				onOutput()
			}
		case "response.completed":
			return ev.Response, nil
		case "response.failed", "response.incomplete", "error":
			return nil, fmt.Errorf("the response ended with %s: %s", ev.Type, data)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the stream ended without a terminal event")
}
