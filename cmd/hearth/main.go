// Command hearth is a per-user agent daemon for editors and its CLI.
//
//	hearth serve [--socket P] [--stdio]   run the daemon
//	hearth acp                            stdio ACP relay to the daemon (starts it when needed)
//	hearth ask [--cwd DIR] PROMPT         one prompt, answer streamed to the terminal
//	hearth status [--json]                the daemon and its workspaces
//	hearth inspect [SESSION] [--json]     sessions, or one session's turns and requests
//	hearth sim [--addr A]                 the built-in Responses simulator
//	hearth bench [--steps N] [--plot F]   request modes side by side on the simulator's cost model, against its floor
//	hearth install [--dry-run]            install the per-user service (systemd --user, launchd)
//	hearth uninstall                      stop and remove the service (an edited ~/.config/hearth/env stays)
//	hearth start | stop | restart         control the installed service
//	hearth service status                 the service's unit file and state
//	hearth doctor [--json]                check the set-up, each problem with its fix
//	hearth logs [-f]                      print (and follow) the daemon's log
//	hearth version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/hearthd/hearth/workspace"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a specific exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

type command struct {
	name, usage, help string
	run               func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"serve", "serve [--socket PATH] [--stdio]", "Run the daemon on its unix socket (or serve one client on stdin/stdout).", runServe},
		{"acp", "acp", "Relay ACP on stdin/stdout to the daemon, starting the daemon when none answers.", runACP},
		{"ask", "ask [--cwd DIR] PROMPT", "Send one prompt and stream the answer.", runAsk},
		{"status", "status [--json]", "Show the daemon, its workspaces and their connections.", runStatus},
		{"inspect", "inspect [SESSION] [--json]", "List sessions, or show one session's turns, items and requests.", runInspect},
		{"sim", "sim [--addr HOST:PORT]", "Run the built-in Responses API simulator.", runSim},
		{"bench", "bench [--json] [--plot FILE]", "Time a tool loop per request mode against the simulator's cost model and its floor.", runBench},
		{"install", "install [--dry-run]", "Install hearth as a per-user service (systemd --user or launchd).", runInstall},
		{"uninstall", "uninstall", "Stop and remove the service; an edited ~/.config/hearth/env stays.", runUninstall},
		{"start", "start", "Start the installed service.", runStart},
		{"stop", "stop", "Stop the daemon: the installed service, or whatever daemon owns the socket.", runStop},
		{"restart", "restart", "Restart the installed service.", runRestart},
		{"service", "service status", "Show the service's unit file and state.", runService},
		{"doctor", "doctor [--json]", "Check the set-up and print each problem with its fix.", runDoctor},
		{"logs", "logs [-f]", "Print the daemon's log; -f follows it.", runLogs},
		{"version", "version", "Print the version.", func(ctx context.Context, _ []string, out, _ io.Writer) error {
			fmt.Fprintln(out, "hearth", version)
			return nil
		}},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "hearth: a per-user agent daemon for editors")
	fmt.Fprintln(w, "\nUsage:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  hearth %s\t%s\n", c.usage, c.help)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nEnvironment: OPENAI_API_KEY, OPENAI_BASE_URL, HEARTH_MODEL, HEARTH_DATA_DIR, HEARTH_SOCKET")
}

func main() {
	// The sandbox helper of one shell command: hidden, no flags, no signal
	// context of its own (workspace.SandboxExec handles its signals).
	if len(os.Args) > 1 && os.Args[1] == sandboxCommand {
		os.Exit(workspace.SandboxExec(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			if helpRequested(args[1:]) {
				commandHelp(ctx, c, stdout)
				return 0
			}
			err := c.run(ctx, args[1:], stdout, stderr)
			if err == nil {
				return 0
			}
			var ee *exitError
			if errors.As(err, &ee) {
				if ee.err != nil && ee.err.Error() != "" {
					fmt.Fprintln(stderr, "hearth:", ee.err)
				}
				return ee.code
			}
			fmt.Fprintln(stderr, "hearth:", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "hearth: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}
