package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// Status is what `hearth status` prints, counting every client.
func (d *Daemon) Status() rpc.Status { return d.status(nil) }

// status is what `_hearth/status` serves to asker: its Clients leave asker
// out (a status call is not a client worth counting).
func (d *Daemon) status(asker *clientConn) rpc.Status {
	d.mu.Lock()
	sc := d.cfg.sessionConfig(d.netDial).WithDefaults()
	st := rpc.Status{
		Version: d.cfg.Version, PID: pid(), Started: d.started, Socket: d.cfg.Socket,
		DataDir: d.cfg.DataDir, Model: sc.Model, Profile: profileStatus(sc), BaseURL: rpc.RedactURL(d.cfg.BaseURL),
		APIKey: rpc.MaskSecret(d.cfg.APIKey), Simulator: d.cfg.Simulator,
		Workspaces: []rpc.WorkspaceStatus{},
	}
	for c := range d.clients {
		if c != asker {
			st.Clients++
		}
	}
	perWS := map[*openWorkspace]int{}
	for _, s := range d.sessions {
		perWS[s.ws]++
		st.Sessions.Open++
		s.mu.Lock()
		if len(s.subs) == 0 && s.cancel == nil {
			st.Sessions.Idle++
		}
		s.mu.Unlock()
	}
	st.Sessions.Closed, st.Sessions.WorkspacesClosed = d.reaper.closedSessions.Load(), d.reaper.closedWorkspaces.Load()
	for root, w := range d.workspaces {
		s := w.client.Stats()
		st.Workspaces = append(st.Workspaces, rpc.WorkspaceStatus{
			Root: root, Model: w.client.Config().Model, State: stateNames[s.State], Transport: s.Transport, ConnAgeMS: s.ConnAge.Milliseconds(),
			Sessions: perWS[w], Lanes: perWS[w],
			Handshakes: s.Handshakes, Warmups: s.Warmups, FullRequests: s.Full,
			IncrementalRequests: s.Incremental, Retries: s.Retries, Fallbacks: s.Fallbacks,
			BytesSent: s.BytesSent, BytesSaved: s.BytesSaved, LastTurnMS: s.LastTurn.Milliseconds(),
			Connections: s.Conns, Fallback: rpc.RedactURLs(s.Fallback), LaneMode: rpc.RedactURLs(s.Lanes),
			WireBytesSent: s.WireSent, WireBytesReceived: s.WireReceived,
			Tokens: tokens(s.Usage), Watch: w.watchState(), Spare: w.spare != nil,
			RateLimits: rateLimits(w.client.RateLimits()),
		})
	}
	d.mu.Unlock()
	sort.Slice(st.Workspaces, func(i, j int) bool { return st.Workspaces[i].Root < st.Workspaces[j].Root })
	return st
}

// watchState is the status' watch field: how the workspace is watched
// now ("inotify"), or how it is degraded ("polling: …" with the fix,
// "partial: …", "off: …").
func (w *openWorkspace) watchState() string {
	if w.watcher == nil {
		return w.watch
	}
	return w.watcher.State()
}

// watchNotice is what a session's first prompt tells the editor about the
// watcher when it is degraded (not watching, scanning, watching a part);
// "" when all is well.
func (w *openWorkspace) watchNotice() string {
	if w.watcher != nil {
		if partial, _ := w.watcher.Partial(); !partial && w.watcher.Problem() == "" {
			return ""
		}
	}
	return "hearth: file watching is " + w.watchState()
}

// probeTimeout bounds _hearth/probe; it holds only the asking client's
// read loop.
const probeTimeout = 10 * time.Second

// Probe checks that the model API the daemon uses now (after reloads) is
// reachable and takes its key, without sending a request.
func (d *Daemon) Probe(ctx context.Context) rpc.ProbeResult {
	d.mu.Lock()
	sc, simulator := d.cfg.sessionConfig(d.netDial), d.cfg.Simulator
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	sc.HandshakeTimeout = probeTimeout
	r := responses.Probe(ctx, sc.Transport())
	return rpc.ProbeResult{Status: r.Status, BaseURL: rpc.RedactURL(sc.WithDefaults().BaseURL), Simulator: simulator,
		Detail: rpc.RedactURLs(r.Detail), ElapsedMS: r.Elapsed.Milliseconds()}
}

func (c *clientConn) inspect(ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.InspectParams
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &p); err != nil {
			return nil, err
		}
	}
	return c.d.Inspect(ctx, p)
}

// Inspect lists sessions by recency, or shows one session's turns, items
// and request log.
func (d *Daemon) Inspect(ctx context.Context, p rpc.InspectParams) (rpc.InspectResult, error) {
	return Inspect(ctx, d.db, p)
}

// Inspect answers _hearth/inspect from db; the CLI uses it directly when
// no daemon is running.
func Inspect(ctx context.Context, db *store.DB, p rpc.InspectParams) (rpc.InspectResult, error) {
	if p.SessionID == "" {
		limit := p.Limit
		if limit <= 0 {
			limit = 50
		}
		rows, err := db.Sessions(ctx, "", limit)
		if err != nil {
			return rpc.InspectResult{}, err
		}
		res := rpc.InspectResult{Sessions: []rpc.SessionInfo{}}
		for _, r := range rows {
			u, err := db.Requests().Usage(ctx, r.ID)
			if err != nil {
				return rpc.InspectResult{}, err
			}
			res.Sessions = append(res.Sessions, rpc.SessionInfo{ID: r.ID, Root: r.Root, Title: r.Title,
				Mode: r.Mode, Model: r.Model, Turns: r.Turns, Created: r.Created, LastActivity: r.LastActivity,
				Tokens: tokens(u)})
		}
		return res, nil
	}
	s, err := sessionByIDOrPrefix(ctx, db, p.SessionID)
	if err != nil {
		return rpc.InspectResult{}, err
	}
	turns, err := db.Items().Turns(ctx, s.ID)
	if err != nil {
		return rpc.InspectResult{}, err
	}
	items, err := db.Items().List(ctx, s.ID)
	if err != nil {
		return rpc.InspectResult{}, err
	}
	reqs, err := db.Requests().List(ctx, s.ID)
	if err != nil {
		return rpc.InspectResult{}, err
	}
	seq := map[int64]int{}
	var total store.Usage
	det := &rpc.SessionDetail{SessionInfo: rpc.SessionInfo{ID: s.ID, Root: s.Root, Title: s.Title, Mode: s.Mode,
		Model: s.Model, Turns: len(turns), Created: s.Created, LastActivity: s.Updated}}
	for _, t := range turns {
		seq[t.ID] = t.Seq
		det.Turns = append(det.Turns, rpc.TurnInfo{Seq: t.Seq, Status: string(t.Status), StopReason: t.StopReason,
			Error: t.Error, Started: t.Started, Ended: t.Ended})
	}
	for _, it := range items {
		det.Items = append(det.Items, rpc.ItemInfo{Seq: it.Seq, Turn: seq[it.TurnID], Origin: string(it.Origin),
			Type: it.Type, Data: it.Data})
	}
	for _, r := range reqs {
		ri := rpc.RequestInfo{ID: r.ID, Turn: seq[r.TurnID], Conn: r.Conn, Kind: string(r.Kind), FullReason: r.FullReason,
			PreviousResponseID: r.PreviousResponseID, ResponseID: r.ResponseID, Status: r.Status, Error: r.Error,
			BytesSent: r.BytesSent, InputItems: r.InputItems, Sent: r.Sent, Tokens: tokens(r.Usage)}
		total = total.Add(r.Usage)
		if !r.FirstEvent.IsZero() {
			ri.FirstEventMS = r.FirstEvent.Sub(r.Sent).Milliseconds()
		}
		if !r.Finished.IsZero() {
			ri.TotalMS = r.Finished.Sub(r.Sent).Milliseconds()
		}
		det.Requests = append(det.Requests, ri)
	}
	det.Tokens = tokens(total)
	comps, err := db.Branches().Compactions(ctx, s.ID)
	if err != nil {
		return rpc.InspectResult{}, err
	}
	for _, c := range comps {
		det.Compactions = append(det.Compactions, rpc.CompactionInfo{ThroughSeq: c.ThroughSeq, Reason: c.Reason,
			Summary: c.Summary, ResponseID: c.ResponseID, Created: c.Created})
	}
	return rpc.InspectResult{Session: det}, nil
}

// prefixCandidates bounds the ids an ambiguous prefix error lists.
const prefixCandidates = 10

// sessionByIDOrPrefix finds the session id names, or else the one session
// whose id begins with it. A prefix that begins several is refused with
// the candidates, so the user can pick one.
func sessionByIDOrPrefix(ctx context.Context, db *store.DB, id string) (store.Session, error) {
	s, err := db.Session(ctx, id)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return s, err
	}
	ids, err := db.SessionIDsWithPrefix(ctx, id, prefixCandidates+1)
	if err != nil {
		return store.Session{}, err
	}
	switch len(ids) {
	case 0:
		return store.Session{}, rpc.UnknownSession(id)
	case 1:
		return db.Session(ctx, ids[0])
	}
	list := strings.Join(ids[:min(len(ids), prefixCandidates)], ", ")
	if len(ids) > prefixCandidates {
		list += ", …"
	}
	return store.Session{}, rpc.InvalidParams("sessionId", "%q is the beginning of more than one session id (%s): give more of it", id, list)
}

func tokens(u store.Usage) rpc.TokenUsage {
	return rpc.NewTokenUsage(u.Input, u.Cached, u.Output, u.Reasoning)
}

// profileStatus is the model profile a configuration puts in effect, its
// overrides applied.
func profileStatus(sc session.Config) rpc.Profile {
	p := sc.Profile
	return rpc.Profile{Family: p.Family, ContextWindow: sc.ContextWindow, ReasoningLevels: p.ReasoningLevels,
		Reasoning: sc.ReasoningEffort, Images: p.Images, ParallelTools: p.ParallelToolCalls,
		ToolOutputTokens: sc.ToolOutputBudget(), PatchStyle: p.PatchStyle, ShellStyle: p.ShellStyle}
}

// stateNames gives each connection state its name on the wire (status
// JSON, which editors and scripts read); TestStatusStateNames holds every
// session.State to one.
var stateNames = map[session.State]string{
	session.StateClosed:       rpc.WorkspaceClosed,
	session.StateConnecting:   rpc.WorkspaceConnecting,
	session.StateWarming:      rpc.WorkspaceWarming,
	session.StateReady:        rpc.WorkspaceReady,
	session.StateStreaming:    rpc.WorkspaceStreaming,
	session.StateRewarming:    rpc.WorkspaceRewarming,
	session.StateHTTPFallback: rpc.WorkspaceHTTPFallback,
}
