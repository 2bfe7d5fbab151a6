package daemon

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// rulesAPI serves _hearth/rules and _hearth/rules/revoke for one client
// connection: the editors' and the CLI's view of the workspaces' kept
// rules. A plain value, made with the connection's method table.
type rulesAPI struct{ db *store.DB }

func (r rulesAPI) list(ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.RulesParams
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &p); err != nil {
			return nil, err
		}
	}
	return Rules(ctx, r.db, p)
}

func (r rulesAPI) revoke(ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.RevokeRulesParams
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	res, err := RevokeRules(ctx, r.db, p)
	if errors.Is(err, store.ErrNotFound) {
		return nil, rpc.InvalidParams("id", "no rule %d; `hearth rules` lists them", p.ID)
	}
	return res, err
}

// Rules answers _hearth/rules from db; the CLI uses it directly when no
// daemon is running.
func Rules(ctx context.Context, db *store.DB, p rpc.RulesParams) (rpc.RulesResult, error) {
	rows, err := db.Rules().List(ctx)
	if err != nil {
		return rpc.RulesResult{}, err
	}
	res := rpc.RulesResult{Rules: []rpc.RuleInfo{}}
	for _, r := range rows {
		if p.Root == "" || r.Root == p.Root {
			res.Rules = append(res.Rules, rpc.RuleInfo{ID: r.ID, Root: r.Root, Kind: string(r.Kind), Pattern: r.Pattern, Created: r.Created})
		}
	}
	return res, nil
}

// RevokeRules answers _hearth/rules/revoke from db: one rule (an unknown
// id wraps store.ErrNotFound) or, with All, every one. The next command
// or edit a revoked rule covered asks again: rules are read at each call.
func RevokeRules(ctx context.Context, db *store.DB, p rpc.RevokeRulesParams) (rpc.RevokeRulesResult, error) {
	switch {
	case p.All:
		n, err := db.Rules().RevokeAll(ctx)
		return rpc.RevokeRulesResult{Revoked: n}, err
	case p.ID <= 0:
		return rpc.RevokeRulesResult{}, rpc.InvalidParams("id", "name a rule (its id, from `hearth rules`) or all")
	}
	if err := db.Rules().Revoke(ctx, p.ID); err != nil {
		return rpc.RevokeRulesResult{}, err
	}
	return rpc.RevokeRulesResult{Revoked: 1}, nil
}
