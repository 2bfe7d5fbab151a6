package rpc

import "time"

// RulesParams are the optional params of _hearth/rules: Root, when set,
// keeps one workspace's rules.
type RulesParams struct {
	Root string `json:"root,omitempty"`
}

// RulesResult is _hearth/rules's answer: the rules by workspace root, then
// oldest first. Built per call.
type RulesResult struct {
	Rules []RuleInfo `json:"rules"`
}

// RuleInfo is one kept "always allow": a command prefix whose commands run
// without asking (in the mode's sandbox, never a wider one), or a
// workspace-relative file path the file tools may change without asking.
type RuleInfo struct {
	ID      int64     `json:"id"`
	Root    string    `json:"root"`
	Kind    string    `json:"kind"` // "command" or "path"
	Pattern string    `json:"pattern"`
	Created time.Time `json:"created"`
}

// RevokeRulesParams name what _hearth/rules/revoke removes: the rule ID,
// or every rule with All.
type RevokeRulesParams struct {
	ID  int64 `json:"id,omitzero"`
	All bool  `json:"all,omitzero"`
}

// RevokeRulesResult says how many rules were removed. Built per call.
type RevokeRulesResult struct {
	Revoked int64 `json:"revoked"`
}
