// Command hearth is a per-user agent daemon for editors and its CLI.
//
//	hearth serve [--socket P] [--stdio]   run the daemon
//	hearth acp                            stdio ACP relay to the daemon (starts it when needed)
//	hearth ask [flags] [PROMPT | -]       one prompt (or stdin), answer streamed; through the daemon; --continue, --session ID
//	hearth status [--json] [--wide]       the daemon and its workspaces
//	hearth inspect [SESSION] [--json]     sessions, or one session's turns and requests
//	hearth rules [--json]                 the kept "always allow" rules; rules revoke ID | --all
//	hearth compact SESSION [--json]       compact a session now (as /compact)
//	hearth login | logout                 store (after checking it) or remove the OpenAI API key
//	hearth sim [--addr A]                 the built-in Responses simulator
//	hearth bench [--steps N] [--plot F]   request modes side by side on the simulator's cost model, against its floor
//	hearth install [--dry-run]            install the per-user service (systemd --user, launchd)
//	hearth uninstall                      stop and remove the service (an edited ~/.config/hearth/env stays)
//	hearth start | stop | restart         control the installed service
//	hearth service status                 the service's unit file and state
//	hearth doctor [--json]                check the set-up, each problem with its fix
//	hearth logs [-f]                      print (and follow) the daemon's log
//	hearth version (--version, -v)
//	hearth help [COMMAND]                 usage, or one command's flags (as hearth COMMAND --help)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a specific exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// Unwrap lets run find a *usageError inside.
func (e *exitError) Unwrap() error { return e.err }

// command is one row of the command table, which lives for the process.
type command struct {
	name, usage, help string
	// maxArgs is how many positional arguments the command takes (-1: any
	// number); its flag set refuses more.
	maxArgs int
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"serve", "serve [--socket PATH] [--stdio]", "Run the daemon on its unix socket (or serve one client on stdin/stdout).", 0, runServe},
		{"acp", "acp", "Relay ACP on stdin/stdout to the daemon, starting the daemon when none answers (`hearth acp login` is `hearth login`: the login editors run).", 0, runACP},
		{"ask", "ask [flags] [PROMPT | -]", "Send one prompt (or stdin) through the daemon, starting it when needed; stream the answer.", -1, runAsk},
		{"status", "status [--json] [--wide]", "Show the daemon, its workspaces and their connections.", 0, runStatus},
		{"inspect", "inspect [SESSION] [--json]", "List sessions, or show one session's turns, items and requests (SESSION: its id or a unique prefix).", 1, runInspect},
		{"rules", "rules [revoke ID | --all]", "List the workspaces' kept \"always allow\" rules (command prefixes, file paths; --json), or revoke one or all.", 2, runRules},
		{"compact", "compact SESSION [--json]", "Compact a session now: the model goes on from a summary of it (the whole history stays).", 1, runCompact},
		{"undo", "undo [flags]", "Put back the files a session's last turn changed, by tools or commands (default: this directory's last session).", 0, runUndo},
		{"login", "login", "Read an OpenAI API key (hidden; or stdin), check it, store it in ~/.config/hearth/env for the daemon.", 0, runLogin},
		{"logout", "logout", "Remove the stored OpenAI API key; a running daemon goes on without it.", 0, runLogout},
		{"sim", "sim [--addr HOST:PORT]", "Run the built-in Responses API simulator.", 0, runSim},
		{"bench", "bench [--json] [--plot FILE]", "Time a tool loop per request mode against the simulator's cost model and its floor.", 0, runBench},
		{"install", "install [--dry-run]", "Install hearth as a per-user service (systemd --user or launchd).", 0, runInstall},
		{"uninstall", "uninstall", "Stop and remove the service; an edited ~/.config/hearth/env stays.", 0, runUninstall},
		{"start", "start", "Start the installed service.", 0, runStart},
		{"stop", "stop", "Stop the daemon: the installed service, or whatever daemon owns the socket.", 0, runStop},
		{"restart", "restart", "Restart the installed service.", 0, runRestart},
		{"service", "service status", "Show the service's unit file and state.", 1, runService},
		{"doctor", "doctor [--json]", "Check the set-up and print each problem with its fix.", 0, runDoctor},
		{"logs", "logs [-f]", "Print the daemon's log; -f follows it.", 0, runLogs},
		{"version", "version", "Print the version (also: hearth --version, hearth -v).", 0, runVersion},
	}
}

// lookup finds a command of the table by name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := newFlags("version", stderr).Parse(args); err != nil {
		return &exitError{2, err}
	}
	fmt.Fprintln(stdout, "hearth", version)
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "hearth: a per-user agent daemon for editors")
	fmt.Fprintln(w, "\nUsage:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  hearth %s\t%s\n", c.usage, c.help)
	}
	tw.Flush()
	fmt.Fprintln(w, "\n`hearth help COMMAND` or `hearth COMMAND --help` shows a command's flags.")
	fmt.Fprintln(w, "\nEnvironment: OPENAI_API_KEY, OPENAI_BASE_URL, HEARTH_MODEL, HEARTH_DATA_DIR, HEARTH_SOCKET")
}

func main() {
	// The sandbox helper of one shell command: hidden, no flags, no signal
	// context of its own (sandbox.Exec handles its signals).
	if len(os.Args) > 1 && os.Args[1] == sandboxCommand {
		os.Exit(sandbox.Exec(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == spawnCommand {
		os.Exit(runSpawn(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	switch args[0] {
	case "help":
		return helpTopic(ctx, args[1:], stdout, stderr)
	case "--version", "-v", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "hearth: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if helpRequested(args[1:]) {
		commandHelp(ctx, c, stdout)
		return 0
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		usageMistake(c, ue, stderr)
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "hearth:", visibleText(cliText(ee.err)))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "hearth:", visibleText(cliText(err))) // it may name a file, quote the model or the API
	return 1
}

// cliText is err as the CLI says it: a daemon's JSON-RPC error without the
// protocol's words ("invalid params: "), which mean nothing on a command
// line. The one place the CLI prints errors.
func cliText(err error) string {
	msg := err.Error()
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		plain := wire.Message
		for _, framing := range []string{"invalid params: ", "invalid request: "} {
			plain = strings.TrimPrefix(plain, framing)
		}
		msg = strings.Replace(msg, wire.Message, plain, 1)
	}
	return msg
}
