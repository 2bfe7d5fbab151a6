package rpc

import (
	"net/url"
	"strings"
)

// RedactURL and RedactURLs, with MaskSecret (status.go), give the forms of
// secrets safe to print: in status, logs, notices to the editor, doctor
// output.

// redacted replaces a secret in a URL.
const redacted = "***"

// RedactURL returns rawURL safe to print: userinfo (user and password) is
// replaced by "***" ("http://***@host/v1") and so is the value of every query
// parameter whose name looks like a credential (key, token, secret,
// password, auth, signature, credential: "?api_key=***"). It works on the
// text, not on a parsed and re-encoded URL, so the rest comes back exactly
// as given, and a URL that net/url refuses (a bad port) is redacted all the
// same. The authority ends at the first '/', '?' or '#' after "://" (RFC
// 3986); the last '@' in it ends the userinfo.
func RedactURL(rawURL string) string {
	s := rawURL
	rest := 0 // where the path begins
	if i := strings.Index(s, "://"); i >= 0 {
		start := i + len("://")
		end := len(s)
		if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
			end = start + j
		}
		if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
			s = s[:start] + redacted + s[start+at:]
			end += len(redacted) - at
		}
		rest = end
	}
	q := strings.IndexByte(s[rest:], '?')
	if q < 0 {
		return s
	}
	q += rest + 1
	end := len(s)
	if f := strings.IndexByte(s[q:], '#'); f >= 0 {
		end = q + f
	}
	return s[:q] + redactQuery(s[q:end]) + s[end:]
}

// redactQuery replaces the values of credential-like parameters in a raw
// query string.
func redactQuery(query string) string {
	params := strings.Split(query, "&")
	for i, p := range params {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue && secretParam(name) {
			params[i] = name + "=" + redacted
		}
	}
	return strings.Join(params, "&")
}

// secretWords are substrings of query parameter names (lower-cased) whose
// values are credentials: api_key, apikey, key, access_token, token,
// client_secret, password, auth, sig, X-Amz-Signature, X-Amz-Credential.
var secretWords = []string{"key", "token", "secret", "pass", "pwd", "auth", "sig", "credential", "jwt"}

// secretParam reports whether a query parameter name (possibly
// percent-encoded) looks like it carries a credential.
func secretParam(name string) bool {
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// RedactURLs applies RedactURL to every URL ("scheme://...") inside text, such
// as an error message that quotes a dial address. A URL ends at white space
// or at a quote, bracket or backtick that cannot be part of it.
func RedactURLs(text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "://")
		if i < 0 {
			break
		}
		start := i
		for start > 0 && isSchemeByte(text[start-1]) {
			start--
		}
		end := i + len("://")
		for end < len(text) && !endsURL(text[end]) {
			end++
		}
		b.WriteString(text[:start])
		if start == i { // no scheme: not a URL
			b.WriteString(text[start:end])
		} else {
			b.WriteString(RedactURL(text[start:end]))
		}
		text = text[end:]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(text)
	return b.String()
}

// isSchemeByte reports whether c may appear in a URL scheme.
func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// endsURL reports whether c ends a URL quoted in text.
func endsURL(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', '<', '>', '(', ')', '{', '}', '|', '\\', '^':
		return true
	}
	return false
}
