package sim

import (
	"encoding/json"
	"net/http"
)

// modelsCreated is the creation time (unix seconds) every listed model
// shows: fixed, as the real API's are.
const modelsCreated = 1700000000

// serveModels is GET {base}/models, the real API's model list, which a
// client uses to check a key without spending tokens (`hearth login`): with
// Options.APIKey set, the same 401 invalid_api_key as the other routes for
// a missing or wrong key. The models are Options.Models, or the default
// model when that is empty.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		apiError{Status: 405, Type: "invalid_request_error", Code: "method_not_allowed", Message: "Use GET."}.writeHTTP(w)
		return
	}
	if !s.opts.authorized(r) {
		invalidAPIKey().writeHTTP(w)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	names := s.opts.Models
	if len(names) == 0 {
		names = []string{s.opts.Model}
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, n := range names {
		list.Data = append(list.Data, model{ID: n, Object: "model", Created: modelsCreated, OwnedBy: "hearth-sim"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}
