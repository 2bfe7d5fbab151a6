package sim

import (
	"encoding/json"
	"sync"
)

// MaxStoredResponses bounds the Server's store of store:true responses; past it the oldest is
// forgotten (the real API keeps them for 30 days; a simulator must not grow without bound).
const MaxStoredResponses = 4096

// responseStore is the Server's memory of the responses created over HTTP with store:true (or
// store absent): what a later HTTP request's previous_response_id continues from, on any
// connection. One per Server; it lives as long as the Server.
type responseStore struct {
	mu    sync.Mutex // guards byID and order
	byID  map[string]cachedResponse
	order []string // ids, oldest first, for the bound
}

// lookup finds a stored response by id.
func (s *responseStore) lookup(id string) (cachedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	return e, ok
}

// put stores a response: a continuation of it starts from its effective input followed by its
// output, as with the connection-local cache.
func (s *responseStore) put(id string, effective []json.RawMessage, effBytes int, output []json.RawMessage) {
	items := make([]json.RawMessage, 0, len(effective)+len(output))
	items = append(append(items, effective...), output...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = make(map[string]cachedResponse)
	}
	s.byID[id] = cachedResponse{id: id, items: items, bytes: effBytes + itemsBytes(output)}
	s.order = append(s.order, id)
	if len(s.order) > MaxStoredResponses {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
}
