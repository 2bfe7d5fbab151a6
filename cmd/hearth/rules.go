package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// runRules lists the workspaces' kept "always allow" rules, or revokes one
// or all: through the daemon, or in the database itself when no daemon
// runs (as inspect does).
func runRules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rules", stderr)
	asJSON := fs.Bool("json", false, "print as JSON (the structs the daemon serves)")
	all := fs.Bool("all", false, "with revoke: every rule")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	var revoke *rpc.RevokeRulesParams
	switch {
	case fs.NArg() == 0 && !*all:
	case fs.Arg(0) == "revoke" && fs.NArg() == 1 && *all:
		revoke = &rpc.RevokeRulesParams{All: true}
	case fs.Arg(0) == "revoke" && fs.NArg() == 2 && !*all:
		id, err := strconv.ParseInt(fs.Arg(1), 10, 64)
		if err != nil || id <= 0 {
			return &exitError{2, fmt.Errorf("rules revoke: %q is not a rule id (`hearth rules` lists them)", fs.Arg(1))}
		}
		revoke = &rpc.RevokeRulesParams{ID: id}
	default:
		return &exitError{2, errors.New("usage: hearth rules [--json] | hearth rules revoke ID | hearth rules revoke --all")}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	src, err := openRules(cctx, cfg)
	if err != nil {
		return err
	}
	defer src.close()
	if revoke != nil {
		res, err := src.revoke(cctx, *revoke)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, res)
		}
		fmt.Fprintf(stdout, "revoked %s\n", plural(int(res.Revoked), "rule"))
		return nil
	}
	list, err := src.list(cctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, list)
	}
	printRules(stdout, list.Rules)
	return nil
}

// rulesSource answers for `hearth rules`: the daemon when one runs, else
// the database itself. It lives for one command.
type rulesSource struct {
	client *rpc.Client
	db     *store.DB
}

func openRules(ctx context.Context, cfg daemon.Config) (rulesSource, error) {
	client, err := connect(ctx, cfg)
	if err == nil {
		return rulesSource{client: client}, nil
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		return rulesSource{}, err
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		return rulesSource{}, err
	}
	return rulesSource{db: db}, nil
}

func (r rulesSource) close() {
	if r.client != nil {
		r.client.Close()
	}
	if r.db != nil {
		r.db.Close()
	}
}

func (r rulesSource) list(ctx context.Context) (rpc.RulesResult, error) {
	var res rpc.RulesResult
	if r.client != nil {
		return res, r.client.Call(ctx, rpc.MethodHearthRules, nil, &res)
	}
	res, err := daemon.Rules(ctx, r.db, rpc.RulesParams{})
	return res, r.advise(err)
}

func (r rulesSource) revoke(ctx context.Context, p rpc.RevokeRulesParams) (rpc.RevokeRulesResult, error) {
	var res rpc.RevokeRulesResult
	if r.client != nil {
		return res, r.client.Call(ctx, rpc.MethodHearthRulesRevoke, p, &res)
	}
	res, err := daemon.RevokeRules(ctx, r.db, p)
	if errors.Is(err, store.ErrNotFound) {
		return res, fmt.Errorf("no rule %d; `hearth rules` lists them", p.ID)
	}
	return res, r.advise(err)
}

// advise adds, to a database error, what the user can do about it.
func (r rulesSource) advise(err error) error {
	if err == nil {
		return nil
	}
	if advice := store.Advice(r.db.Path(), err); advice != "" {
		return fmt.Errorf("%w; %s", err, advice)
	}
	return err
}

// printRules shows the rules, one line each, the workspace made visible
// (visible.go).
func printRules(w io.Writer, rules []rpc.RuleInfo) {
	if len(rules) == 0 {
		fmt.Fprintln(w, "no rules: an \"always allow\" answer in ask or auto-edit mode keeps one")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKSPACE\tKIND\tALLOWS\tCREATED")
	for _, r := range rules {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.ID, visibleLine(r.Root), r.Kind, visibleLine(r.Pattern), r.Created.Local().Format(time.DateTime))
	}
	tw.Flush()
}
