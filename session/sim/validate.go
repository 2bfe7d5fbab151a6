package sim

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// validate applies the server's rules that a parse cannot know (the store:false id rule of
// docs/ARCHITECTURE.md's "The Responses protocol", Options.Models, reasoning support) to a parsed request, on either transport. A problem
// is kept as the request's first validation failure, so that it is answered in order on the
// request's lane and consumes no fault.
func (o Options) validate(req *request) {
	if req.invalid != nil {
		return
	}
	model := modelOr(req.model, o.model())
	if len(o.Models) > 0 && !contains(o.Models, model) {
		req.fail(modelNotFound(model))
		return
	}
	if e := req.reasoning.effort; e != "" && e != "none" && !o.reasons(model) {
		req.fail(unsupportedParameter("reasoning.effort", "with this model"))
		return
	}
	if e := checkSearchEffort(req); e != nil {
		req.fail(*e)
		return
	}
	if req.storeOff() {
		for _, it := range req.input {
			if id := itemID(it); serverIssued.MatchString(id) {
				req.fail(itemNotPersisted(id))
				return
			}
		}
	}
	for i, it := range req.input {
		if !o.verifyReasoningItem(it) {
			name := itemID(it)
			if name == "" {
				name = "input[" + strconv.Itoa(i) + "]"
			}
			req.fail(invalidEncryptedContent(name))
			return
		}
		if e := checkImages(i, it); e != nil {
			req.fail(*e)
			return
		}
		if e := checkSearchItem(i, it); e != nil {
			req.fail(*e)
			return
		}
	}
}

// serverIssued matches the ids a server gives output items: a lowercase prefix, "_", then hex
// digits only (the real API's rs_/msg_/fc_ + 48–50 hex digits, this simulator's + 24). Under
// store:false the server looks such an id up and finds nothing. Ids a client makes itself are
// another matter: Codex sends its own msg_<uuid> ids on every store:false request and the
// real API accepts them, so an id of another shape is left alone.
var serverIssued = regexp.MustCompile(`^[a-z]+_[0-9a-f]{16,}$`)

// itemID is an input item's id member when it is a non-empty string.
func itemID(item json.RawMessage) string {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	var id string
	if json.Unmarshal(item, &v) != nil || json.Unmarshal(v.ID, &id) != nil {
		return ""
	}
	return id
}

// verifyReasoningItem checks a reasoning input item's encrypted_content, if it has one, and a
// compaction item's, which it must have: the content must be one this server's secret sealed.
// Other items always pass.
func (o Options) verifyReasoningItem(item json.RawMessage) bool {
	var v struct {
		Type             string          `json:"type"`
		EncryptedContent json.RawMessage `json:"encrypted_content"`
	}
	if json.Unmarshal(item, &v) != nil || (v.Type != "reasoning" && v.Type != "compaction") {
		return true
	}
	if v.Type == "reasoning" && (len(v.EncryptedContent) == 0 || isNull(v.EncryptedContent)) {
		return true
	}
	var sealed string
	if json.Unmarshal(v.EncryptedContent, &sealed) != nil {
		return false
	}
	_, ok := unseal(o.secret(), sealed)
	return ok
}

// inputTokens is the effective input's size in tokens at four bytes each, as usage counts it:
// cached and new items (effBytes, their itemsBytes), instructions and tools.
func inputTokens(req *request, effBytes int) int {
	return (effBytes + len(req.fields["instructions"]) + len(req.tools) + 3) / 4
}

// checkContext counts the effective input's tokens, for the record's InputTokens, and refuses
// an input larger than the model's window (Options.Windows, else Options.ContextWindow).
func (o Options) checkContext(req *request, effBytes int) (tokens int, _ *apiError) {
	n := inputTokens(req, effBytes)
	w := o.window(modelOr(req.model, o.model()))
	if w <= 0 || n <= w {
		return n, nil
	}
	e := contextLengthExceeded()
	return n, &e
}

// instead is the error a request fault answers with in place of the response, if any.
func (f *Fault) instead(model string) (apiError, bool) {
	if f == nil {
		return apiError{}, false
	}
	switch f.Kind {
	case FaultRateLimit:
		return rateLimited(model, f.Delay), f.AfterEvents == 0
	case FaultInsufficientQuota:
		return insufficientQuota(), true
	case FaultContextLength:
		return contextLengthExceeded(), true
	case FaultServerError:
		return serverError(), true
	case FaultInvalidAPIKey:
		return invalidAPIKey(), true
	}
	return apiError{}, false
}
