package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// helpRequested reports whether args ask for help (-h, -help, --help before
// any "--").
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandHelp prints `hearth CMD --help` (and `hearth help CMD`): the usage
// line, the description and the command's flags. The flags come from the
// command's own flag set: the command is run with -h, which every command
// parses before doing anything, and its Parse answers with the flag set.
func commandHelp(ctx context.Context, c command, w io.Writer) {
	fmt.Fprintf(w, "Usage: hearth %s\n\n%s\n", c.usage, c.help)
	var ue *usageError
	if err := c.run(ctx, []string{"-h"}, io.Discard, io.Discard); errors.As(err, &ue) {
		printFlags(w, ue)
	}
	if more := helpMore[c.name]; more != "" {
		fmt.Fprint(w, more)
	}
}

// helpMore is what a command's help says after its flags.
var helpMore = map[string]string{"ask": askExitCodes, "sim": simWords}

// usageMistake prints a command line's mistake once, then the command's
// usage and flags, to stderr.
func usageMistake(c command, ue *usageError, stderr io.Writer) {
	fmt.Fprintf(stderr, "hearth %s: %v\n\nUsage: hearth %s\n", c.name, ue.err, c.usage)
	printFlags(stderr, ue)
}

func printFlags(w io.Writer, ue *usageError) {
	if text := flagsText(ue.flags); text != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", text)
	}
}

// helpTopic is `hearth help [COMMAND]`.
func helpTopic(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		usage(stdout)
		return 0
	case 1:
		if c, ok := lookup(args[0]); ok {
			commandHelp(ctx, c, stdout)
			return 0
		}
		fmt.Fprintf(stderr, "hearth help: unknown command %q\n\n", args[0])
	default:
		fmt.Fprintf(stderr, "hearth help: name one command, got %q\n\n", args)
	}
	usage(stderr)
	return 2
}
