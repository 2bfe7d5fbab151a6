package responses

import (
	"net/url"
	"strings"
)

// safeURL is a URL as it may appear in an error, a log line or a notice:
// credentials in its userinfo (http://user:pass@host) replaced by ***.
// Errors of this package reach the editor and status, so the base URL
// never enters them unredacted. (rpc.RedactURL does the same for the
// daemon; session may not import rpc.)
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// Unparseable: cut anything that could be userinfo.
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				return raw[:j+3] + "***" + raw[i:]
			}
			return "***" + raw[i:]
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	u.User = nil
	scheme, rest, _ := strings.Cut(u.String(), "://")
	return scheme + "://***@" + rest
}
