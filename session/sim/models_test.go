package sim

import (
	"encoding/json"
	"net/http"
	"testing"
)

// GET {base}/models lists the models to a good key and refuses a bad one
// with the API's 401, as the real endpoint does.
func TestModelsChecksTheKey(t *testing.T) {
	srv := New(Options{APIKey: "sk-good", Models: []string{"gpt-a", "gpt-b"}})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(key string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, base+"/models", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := get("sk-good")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || list.Object != "list" || len(list.Data) != 2 || list.Data[1].ID != "gpt-b" || list.Data[0].Object != "model" {
		t.Fatalf("good key: %d %+v (%v)", resp.StatusCode, list, err)
	}
	for _, key := range []string{"sk-bad", ""} {
		resp, err := get(key)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 401 || e.Error.Code != "invalid_api_key" {
			t.Errorf("key %q: %d %+v, want 401 invalid_api_key", key, resp.StatusCode, e)
		}
	}
}
