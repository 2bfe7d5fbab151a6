package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// list is session/list: the stored sessions, of one workspace when cwd is
// given, most recent first, listPage at a time. The cursor names the last
// session of the previous page; a client only hands it back.
func (c *clientConn) list(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.ListSessionsRequest
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
	}
	root := ""
	if req.Cwd != nil && *req.Cwd != "" {
		if !filepath.IsAbs(*req.Cwd) {
			return nil, rpc.InvalidParams("cwd", "must be an absolute path, got %q", *req.Cwd)
		}
		if r, err := filepath.EvalSymlinks(*req.Cwd); err == nil {
			root = r
		} else {
			root = filepath.Clean(*req.Cwd)
		}
	}
	var pos *store.SessionPos
	if req.Cursor != nil {
		p, err := decodeCursor(*req.Cursor)
		if err != nil {
			return nil, rpc.InvalidParams("cursor", "%v: pass back the nextCursor of an earlier answer, or none for the first page", err)
		}
		pos = &p
	}
	rows, err := c.d.db.SessionsAfter(ctx, root, pos, listPage+1)
	if err != nil {
		return nil, err
	}
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	if len(rows) > listPage {
		rows = rows[:listPage]
		last := rows[len(rows)-1]
		next := encodeCursor(store.SessionPos{LastActivity: last.LastActivity, ID: last.ID})
		out.NextCursor = &next
	}
	for _, r := range rows {
		info := acp.SessionInfo{SessionId: acp.SessionId(r.ID), Cwd: r.Root}
		if r.Title != "" {
			t := r.Title
			info.Title = &t
		}
		u := isoTime(r.LastActivity)
		info.UpdatedAt = &u
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// encodeCursor and decodeCursor turn a place in the list into the opaque
// text session/list hands out, and back: "v1.<unix nanos>.<id>", base64url.
func encodeCursor(p store.SessionPos) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1." + strconv.FormatInt(p.LastActivity.UnixNano(), 10) + "." + p.ID))
}

func decodeCursor(s string) (store.SessionPos, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	parts := strings.SplitN(string(b), ".", 3)
	if len(parts) != 3 || parts[0] != "v1" || parts[2] == "" {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return store.SessionPos{}, fmt.Errorf("%q is not a cursor hearth gave", s)
	}
	return store.SessionPos{LastActivity: time.Unix(0, n), ID: parts[2]}, nil
}

// isoTime is a time as ACP's updatedAt carries it (ISO 8601, UTC).
func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// turnEnded tells s's editors, at the end of each turn, the time of the
// session's last activity and — after the first prompt of a session
// without one — its title, which it stores (session/list and hearth
// inspect show it). first is that prompt's title, "" for a turn that
// gives none (/compact).
func (d *Daemon) turnEnded(ctx context.Context, s *openSession, first string) {
	u := &acp.SessionSessionInfoUpdate{}
	if first != "" {
		if row, err := d.db.Session(ctx, s.id); err == nil && row.Title == "" {
			if err := d.db.SetSessionTitle(ctx, s.id, first); err != nil {
				d.log.Warn("cannot store the session's title", "session", s.id, "err", err)
			} else {
				u.Title = &first
			}
		}
	}
	at := isoTime(time.Now())
	u.UpdatedAt = &at
	s.broadcast(acp.SessionUpdate{SessionInfoUpdate: u}, nil)
}

// titleMax is about how long a title is, in characters.
const titleMax = 60

// title is a session's title from its first prompt: the first line with
// text, without control characters, its spaces collapsed, cut at a word
// boundary near titleMax characters.
func title(prompt string) string {
	var line string
	for l := range strings.Lines(prompt) {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, line)
	r := []rune(strings.Join(strings.Fields(line), " "))
	if len(r) <= titleMax {
		return string(r)
	}
	cut := titleMax
	for i := titleMax; i > titleMax/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " .,;:") + "…"
}
