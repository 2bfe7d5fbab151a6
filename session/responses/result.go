package responses

import (
	"encoding/json"
	"fmt"
)

// Result is a response that reached response.completed or
// response.incomplete: a plain value.
type Result struct {
	ID         string
	Incomplete string // the incomplete reason; "" when completed
	Output     []json.RawMessage
	Usage      Usage
}

// Usage is a response's token counts.
type Usage struct {
	Input, Cached, Output, Reasoning int64
}

// Terminal reports whether e ends its response.
func (e *Event) Terminal() bool { return isTerminal(e.Type) }

// End returns what the terminal event e of s says: the response's Result,
// or why it failed (*ResponseError, *APIError, or *NoLanesError when the
// server refused the lane s is on).
func (s *Stream) End(e *Event) (*Result, error) {
	switch e.Type {
	case "response.completed", "response.incomplete":
		if e.Response == nil {
			return nil, fmt.Errorf("%s without a response", e.Type)
		}
		r := &Result{ID: e.Response.ID, Output: e.Response.Output, Usage: e.Response.Usage.usage()}
		if e.Type == "response.incomplete" {
			r.Incomplete = "incomplete"
			if d := e.Response.IncompleteDetails; d != nil && d.Reason != "" {
				r.Incomplete = d.Reason
			}
		}
		return r, nil
	case "response.failed":
		re := &ResponseError{Status: "failed"}
		if e.Response != nil {
			re.ResponseID = e.Response.ID
			if e.Response.Error != nil {
				re.Code, re.Reason = e.Response.Error.Code, e.Response.Error.Message
			}
		}
		return nil, re
	case "error":
		ae := e.apiError()
		if refusesLanes(ae) && s.lane != "" {
			// A server that echoes the lane while refusing it.
			why := fmt.Sprintf("the server refuses stream_id (%s)", ae.Message)
			return nil, &NoLanesError{Why: why, Switched: s.conn.refusedLanes(why)}
		}
		return nil, ae
	}
	return nil, fmt.Errorf("%s is not a terminal event", e.Type)
}
