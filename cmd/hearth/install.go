package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/hearthd/hearth/installer"
)

// servicePlan is the install plan for this user, this binary and this OS.
func servicePlan() (installer.Plan, error) {
	cfg, err := loadConfig()
	if err != nil {
		return installer.Plan{}, err
	}
	bin, err := os.Executable()
	if err != nil {
		return installer.Plan{}, fmt.Errorf("cannot find the hearth binary: %w", err)
	}
	spec, err := installer.SpecFor(cfg.Socket, cfg.DataDir, bin)
	if err != nil {
		return installer.Plan{}, err
	}
	return installer.NewPlan(runtime.GOOS, spec)
}

// goRunBuild reports a binary the go command built for `go run` or `go
// test` and will delete: one in its scratch directory (go-build<digits>
// under $GOTMPDIR or the temp dir) or, since Go 1.24 caches `go run`
// executables, in the build cache ($GOCACHE, by default
// os.UserCacheDir()/go-build). A binary from `go build -o` or `go install`
// stays where it was put, whatever the directory (/tmp included).
func goRunBuild(bin string) bool {
	for _, el := range strings.Split(filepath.ToSlash(bin), "/") {
		if digits, ok := strings.CutPrefix(el, "go-build"); ok && strings.Trim(digits, "0123456789") == "" {
			return true // the default cache dir's name, or a scratch dir's
		}
	}
	for _, cache := range []string{os.Getenv("GOCACHE"), userGoCache()} {
		if cache != "" && within(bin, cache) {
			return true
		}
	}
	return false
}

func userGoCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "go-build")
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func runInstall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("install", stderr)
	dry := fs.Bool("dry-run", false, "print the files install would write, with their full contents, and write nothing")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	p, err := servicePlan()
	if err != nil {
		return err
	}
	goRun := goRunBuild(p.Spec.Binary)
	if *dry {
		p.DryRun(stdout)
		if goRun {
			fmt.Fprintf(stderr, "hearth: note: %s is a temporary build of `go run` or `go test`; install from a built binary (go build, make build, go install)\n", p.Spec.Binary)
		}
		return nil
	}
	if goRun {
		return fmt.Errorf("%s is a temporary build of `go run` or `go test`, which the go command deletes: the service would lose it; build it (`go build -o DIR/hearth ./cmd/hearth`, `make build` or `go install ./cmd/hearth`) and run that binary's install", p.Spec.Binary)
	}
	wrote, err := p.Apply()
	if err != nil {
		return err
	}
	for _, w := range wrote {
		fmt.Fprintln(stdout, "wrote", w)
	}
	if len(wrote) == 0 {
		fmt.Fprintln(stdout, "already installed:", p.Unit.Path)
	}
	fmt.Fprintf(stdout, "settings and OPENAI_API_KEY go in %s (mode 0600), never in the unit\n", p.Env.Path)
	m, err := installer.NewManager(ctx, p)
	if err != nil {
		return fmt.Errorf("the service file is in place but the service is not enabled: %w", err)
	}
	if err := m.Enable(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "enabled; start it now with `hearth start`")
	return nil
}

func runUninstall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("uninstall", stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	p, err := servicePlan()
	if err != nil {
		return err
	}
	m, merr := installer.NewManager(ctx, p)
	if merr == nil {
		if err := m.Disable(ctx); err != nil {
			return err
		}
	}
	removed, err := p.Remove()
	if err != nil {
		return err
	}
	if merr == nil {
		if err := m.Reload(ctx); err != nil {
			return err
		}
	}
	for _, r := range removed {
		fmt.Fprintln(stdout, "removed", r)
	}
	if len(removed) == 0 {
		fmt.Fprintln(stdout, "not installed: nothing to remove")
	}
	if _, err := os.Stat(p.Env.Path); err == nil {
		fmt.Fprintf(stdout, "kept %s (your settings and key); delete it yourself if you no longer want it\n", p.Env.Path)
	}
	if merr != nil {
		fmt.Fprintf(stderr, "hearth: note: the service manager was not asked to stop hearth: %v\n", merr)
	}
	return nil
}

// manager returns the Manager of an installed service, or an error saying
// why there is none.
func manager(ctx context.Context) (*installer.Manager, installer.Plan, error) {
	p, err := servicePlan()
	if err != nil {
		return nil, p, err
	}
	if _, err := os.Stat(p.Unit.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, p, fmt.Errorf("the hearth service is not installed (%s is missing): run `hearth install`", p.Unit.Path)
	}
	m, err := installer.NewManager(ctx, p)
	return m, p, err
}

// serviceAction is start, stop and restart.
func serviceAction(name string, do func(*installer.Manager, context.Context) error) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := newFlags(name, stderr)
		if err := fs.Parse(args); err != nil {
			return &exitError{2, err}
		}
		m, _, err := manager(ctx)
		if err != nil {
			return err
		}
		if err := do(m, ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "hearth service: %s done\n", name)
		return nil
	}
}

var (
	runStart    = serviceAction("start", (*installer.Manager).Start)
	stopService = serviceAction("stop", (*installer.Manager).Stop)
	runRestart  = serviceAction("restart", (*installer.Manager).Restart)
)

// runService is `hearth service status`: the unit file, the service
// manager, and the state the manager reports. Exit 1 when the manager
// cannot be asked, 3 when the service is installed but not running.
func runService(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("service", stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if fs.NArg() != 1 || fs.Arg(0) != "status" {
		return &exitError{2, errors.New("usage: hearth service status")}
	}
	p, err := servicePlan()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	installed := "no (run `hearth install`)"
	if _, err := os.Stat(p.Unit.Path); err == nil {
		installed = "yes"
	}
	fmt.Fprintf(tw, "unit\t%s\t%s\n", p.Unit.Path, installed)
	env := "missing (install creates it)"
	if info, err := os.Stat(p.Env.Path); err == nil {
		env = fmt.Sprintf("mode %04o", info.Mode().Perm())
	}
	fmt.Fprintf(tw, "env file\t%s\t%s\n", p.Env.Path, env)
	m, err := installer.NewManager(ctx, p)
	if err != nil {
		fmt.Fprintf(tw, "manager\tunavailable\n")
		tw.Flush()
		return err
	}
	state, err := m.State(ctx)
	if err != nil {
		fmt.Fprintf(tw, "state\tunknown\n")
		tw.Flush()
		return err
	}
	fmt.Fprintf(tw, "state\t%s\n", state)
	if state != "running" {
		tw.Flush()
		return &exitError{3, nil}
	}
	return nil
}
