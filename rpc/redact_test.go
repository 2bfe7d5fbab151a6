package rpc

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://user:pass@host/v1", "http://***@host/v1"},
		{"http://user@host:8080/v1", "http://***@host:8080/v1"},
		{"https://us%3Aer:p%40ss@host", "https://***@host"},
		{"https://a:b@c@host/v1?x=1", "https://***@host/v1?x=1"},
		{"ws://user:pass@[::1]:80/responses", "ws://***@[::1]:80/responses"},
		{"https://host/v1?api_key=sk-123&model=gpt", "https://host/v1?api_key=***&model=gpt"},
		{"https://host/v1?token=t&Access_Token=a&sig=s&X-Amz-Signature=z&X-Amz-Credential=c&password=p&q=ok", "https://host/v1?token=***&Access_Token=***&sig=***&X-Amz-Signature=***&X-Amz-Credential=***&password=***&q=ok"},
		{"https://host/v1?key", "https://host/v1?key"},
		{"https://u:p@host/v1?apikey=k#frag", "https://***@host/v1?apikey=***#frag"},
		{"http://user:pass@host:notaport/v1", "http://***@host:notaport/v1"}, // does not parse: redacted anyway
		{"host/v1?secret=s", "host/v1?secret=***"},
		{"https://host/path@not-userinfo", "https://host/path@not-userinfo"},
	}
	for _, tc := range cases {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactURLsInText(t *testing.T) {
	in := `dial wss://bob:hunter2@proxy.example/v1/responses: dial tcp: lookup proxy.example: no such host; OPENAI_BASE_URL "http://k:v@h/x?api-key=zzz" (see https://docs.example/help)`
	got := RedactURLs(in)
	for _, secret := range []string{"bob", "hunter2", "k:v", "zzz"} {
		if strings.Contains(got, secret) {
			t.Errorf("RedactURLs left %q in %q", secret, got)
		}
	}
	want := `dial wss://***@proxy.example/v1/responses: dial tcp: lookup proxy.example: no such host; OPENAI_BASE_URL "http://***@h/x?api-key=***" (see https://docs.example/help)`
	if got != want {
		t.Errorf("RedactURLs:\n got %s\nwant %s", got, want)
	}
	if plain := "no url here: a://"; RedactURLs(plain) != plain {
		t.Errorf("RedactURLs(%q) = %q", plain, RedactURLs(plain))
	}
}
