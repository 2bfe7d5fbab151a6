package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

// ErrNoSteering is Link.Steer's answer where steering cannot be sent: over
// HTTP (it needs the WebSocket's connection-local state).
var ErrNoSteering = errors.New("steering needs the WebSocket transport")

// ErrNoSuccessor ends a stream that waited for the automatic successor of
// its steered response when the server returned the steering input
// instead (response.steer.failed, successor_creation_failed): nothing more
// comes on the stream, its lane is free, and the input is the client's to
// send again.
var ErrNoSuccessor = errors.New("the server returned the steering input instead of continuing the response")

// SteerRef is an event's steer member: the steering submission a
// response.steer.* event is about.
type SteerRef struct {
	ID                 string          `json:"id,omitempty"`
	PreviousResponseID string          `json:"previous_response_id"`
	Input              json.RawMessage `json:"input,omitempty"`
}

// SteerState is what a stream knows of the steering sent for its response
// (Link.Steer), in submissions: sent, acknowledged, refused before
// acknowledgement (response.steer.failed without an id), returned after it
// (with an id), held for the client's explicit continuation
// (response.steer.pending) and committed by a successor's
// response.created. Code is the last failure's. A plain value.
type SteerState struct {
	Sent, Accepted, Refused, Returned, Pending, Committed int
	Code                                                  string
}

// Unanswered is how many submissions have had neither an acknowledgement
// nor a refusal: after a lost connection, their outcome is unknown.
func (s SteerState) Unanswered() int { return max(0, s.Sent-s.Accepted-s.Refused) }

// Queued is how many acknowledged submissions wait for a successor: neither
// committed, held for a continuation nor returned.
func (s SteerState) Queued() int { return max(0, s.Accepted-s.Committed-s.Pending-s.Returned) }

// Steer sends response.steer for the running response id on lane, whose
// stream st is: input (user messages) queued into that response. Its
// outcome arrives as events on st (response.steer.accepted, .pending,
// .failed) and in st.Steering; a successor's response.created on st
// commits it.
func (c *wsConn) Steer(ctx context.Context, st *Stream, id string, input []json.RawMessage) error {
	frame, err := json.Marshal(struct {
		Type               string            `json:"type"`
		PreviousResponseID string            `json:"previous_response_id"`
		Input              []json.RawMessage `json:"input"`
	}{"response.steer", id, input})
	if err != nil {
		return fmt.Errorf("encode response.steer: %w", err)
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.steering[st.lane] = st
	c.mu.Unlock()
	st.noteSent()
	c.writeMu.Lock()
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.ws.SetWriteDeadline(deadline)
	err = c.ws.WriteMessage(websocket.TextMessage, frame)
	c.writeMu.Unlock()
	if err != nil {
		err = fmt.Errorf("%w: write: %v", ErrConnectionLost, err)
		c.fail(err)
		c.ws.Close()
		return err
	}
	return nil
}

// Steer over HTTP: not available.
func (h *httpLink) Steer(context.Context, *Stream, string, []json.RawMessage) error {
	return ErrNoSteering
}

// isSteerEvent reports whether events of type t answer a response.steer.
func isSteerEvent(t string) bool {
	switch t {
	case "response.steer.accepted", "response.steer.pending", "response.steer.failed":
		return true
	}
	return false
}

// noteSent counts a submission sent for the stream's response.
func (s *Stream) noteSent() {
	s.mu.Lock()
	s.steer.Sent++
	s.mu.Unlock()
}

// noteSteer counts what a steering event or a successor's response.created
// says, and tells the stream's owner. Called by the connection's reader,
// also after the stream's terminal event (a steer answered late).
func (s *Stream) noteSteer(e *Event) {
	s.mu.Lock()
	switch e.Type {
	case "response.steer.accepted":
		s.steer.Accepted++
	case "response.steer.pending":
		s.steer.Pending++
	case "response.steer.failed":
		if e.Steer != nil && e.Steer.ID != "" {
			s.steer.Returned++
		} else {
			s.steer.Refused++
		}
		if e.Error != nil {
			s.steer.Code = e.Error.Code
		}
	case "response.created":
		s.steer.Committed += s.steer.Queued()
	}
	s.mu.Unlock()
	s.notify()
}

// Steering is what the stream knows of its response's steering now.
func (s *Stream) Steering() SteerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steer
}

// Continued reports whether the stream goes on after the terminal event e
// with an automatic successor that commits acknowledged steering: the
// response ended steered, or completed with steering queued and no
// client-owned tool output to wait for.
func (e *Event) Continued() bool { return e.continued }

// AwaitSteering waits, after the stream's response ended without a
// successor, until every submission sent for it is settled (refused,
// returned, or held for the client's continuation), the connection fails,
// or ctx or timeout ends; it returns the state then. A lost connection leaves the
// outcome unknown: Unanswered stays above zero.
func (s *Stream) AwaitSteering(ctx context.Context, timeout time.Duration) SteerState {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		st, dead := s.steer, s.err != nil && !s.successor
		s.mu.Unlock()
		if st.Unanswered() == 0 && st.Queued() == 0 || dead || !s.conn.Alive() {
			return st
		}
		select {
		case <-ctx.Done():
			return st
		case <-t.C:
			return st
		case <-s.signal:
		}
	}
}

// continuesAfter decides, at terminal event e of a stream with steering,
// whether a successor follows on it.
func continuesAfter(e *Event, st SteerState) bool {
	if st.Queued() == 0 || e.Response == nil {
		return false
	}
	switch e.Type {
	case "response.incomplete":
		d := e.Response.IncompleteDetails
		return d != nil && d.Reason == "steered"
	case "response.completed":
		return !hasClientCalls(e.Response.Output)
	}
	return false
}

// hasClientCalls reports whether output holds a call the client must answer.
func hasClientCalls(output []json.RawMessage) bool {
	for _, it := range output {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(it, &v)
		switch v.Type {
		case "function_call", "custom_tool_call", "computer_call", "shell_call", "apply_patch_call", "mcp_approval_request":
			return true
		}
	}
	return false
}
