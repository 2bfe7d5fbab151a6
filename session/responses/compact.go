package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// CompactRequest is the body of POST {base}/responses/compact, the API's
// own compaction: the conversation's items and the settings its requests
// carry. There is no WebSocket event for it, and no stream: one request,
// one JSON answer.
type CompactRequest struct {
	Model             string            `json:"model"`
	Instructions      string            `json:"instructions,omitempty"`
	Tools             json.RawMessage   `json:"tools,omitempty"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	Reasoning         *Reasoning        `json:"reasoning,omitempty"`
	PromptCacheKey    string            `json:"prompt_cache_key,omitempty"`
	Input             []json.RawMessage `json:"input"`
}

// CompactRequestFor is the compaction request of a conversation whose
// requests carry set, for input.
func CompactRequestFor(set Settings, input []json.RawMessage) CompactRequest {
	return CompactRequest{Model: set.Model, Instructions: set.Instructions, Tools: set.Tools,
		ParallelToolCalls: set.ParallelToolCalls, Reasoning: set.Reasoning, PromptCacheKey: set.PromptCacheKey, Input: input}
}

// Compacted is the API's answer to a compaction: the items that replace
// the input (the user's messages as they were and an opaque, encrypted
// compaction item), what it counted, and the bytes it took each way.
type Compacted struct {
	ID       string
	Output   []json.RawMessage
	Usage    Usage
	Sent     int
	Received int
}

// maxCompacted bounds the answer read: the compacted items of a window.
const maxCompacted = 64 << 20

// Compact asks the API to compact req's input. A refusal is an *APIError
// (CauseOf gives its cause, as for any request); an answer that is not a
// compaction is an error saying so.
func (c *Client) Compact(ctx context.Context, req CompactRequest) (*Compacted, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("compaction request: %w", err)
	}
	cfg := c.Config()
	url := strings.TrimSuffix(cfg.BaseURL, "/") + "/responses/compact"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if ue := unreachable(cfg.BaseURL, err); ue != nil {
		return nil, ue
	}
	if err != nil {
		return nil, fmt.Errorf("%w: POST %s: %s", ErrConnectionLost, safeURL(url), strings.ReplaceAll(err.Error(), url, safeURL(url)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpErrorEvent(resp).apiError()
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxCompacted))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the compaction: %v", ErrConnectionLost, err)
	}
	var out struct {
		ID     string            `json:"id"`
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
		Usage  *usageBody        `json:"usage"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Object != "response.compaction" {
		return nil, fmt.Errorf("POST %s answered %d bytes that are not a compaction (object %q): %v", safeURL(url), len(b), out.Object, err)
	}
	return &Compacted{ID: out.ID, Output: out.Output, Usage: out.Usage.usage(), Sent: len(body), Received: len(b)}, nil
}
