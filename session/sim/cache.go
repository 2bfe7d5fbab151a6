package sim

import (
	"encoding/json"
	"sync"
)

// laneCache is a connection's store:false memory: the latest response of each lane, with the
// items a continuation of it starts from (that response's effective input plus its output).
// One per WebSocket connection; it dies with the connection, so a new connection starts empty.
type laneCache struct {
	mu     sync.Mutex // guards latest
	latest map[string]cachedResponse
}

type cachedResponse struct {
	id    string
	items []json.RawMessage
	bytes int // total size of items, for usage.input_tokens_details.cached_tokens
}

// effectiveInput is what a request's response reads: the items of the response it continues
// (none without previous_response_id), then its own new input. One per request, built when
// the request is resolved.
type effectiveInput struct {
	items       []json.RawMessage
	bytes       int // total size of items, for usage and the window
	cachedItems int // how many of items came from the continued response
	cachedBytes int // their size, for usage.input_tokens_details.cached_tokens
	// steers are the steering submissions parked on the continued response and prepended to
	// the new input (response.steer.pending); the response's created event commits them.
	steers []steerSub
}

// continuing is req's effective input when it continues parent. The cached part's size is kept
// with it: a long conversation is not rescanned per request.
func continuing(parent cachedResponse, req *request) effectiveInput {
	items := make([]json.RawMessage, 0, len(parent.items)+len(req.input))
	items = append(append(items, parent.items...), req.input...)
	return effectiveInput{items: items, bytes: parent.bytes + itemsBytes(req.input),
		cachedItems: len(parent.items), cachedBytes: parent.bytes}
}

// lookup finds id as the latest response of a lane of the connection: lane's own first, then
// another lane's — stream_id routes, previous_response_id is lineage, so a new lane may continue
// (fork) a response created on another lane. Only a lane's latest response is held: an older
// one is a miss.
func (c *laneCache) lookup(lane, id string) (cachedResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.latest[lane]; ok && e.id == id {
		return e, true
	}
	for _, e := range c.latest {
		if e.id == id {
			return e, true
		}
	}
	return cachedResponse{}, false
}

// put makes e the latest response of lane, replacing the previous one.
func (c *laneCache) put(lane string, e cachedResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latest == nil {
		c.latest = make(map[string]cachedResponse)
	}
	c.latest[lane] = e
}

// evict forgets lane's latest response (a failed continuation on that lane).
func (c *laneCache) evict(lane string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.latest, lane)
}

// clear forgets everything (FaultDropCache).
func (c *laneCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest = nil
}

// itemsBytes is the size usage counts for items, at four bytes a token
// (itemSize: an image counts as its tokens, not its data URL).
func itemsBytes(items []json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += itemSize(it)
	}
	return n
}
