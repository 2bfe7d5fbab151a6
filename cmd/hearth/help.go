package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
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

// commandHelp prints `hearth CMD --help` to stdout: the usage line, the
// description and the command's flags. The flags come from the command's
// own flag set: it is run with -h, which every command parses before doing
// anything, with its stdout discarded.
func commandHelp(ctx context.Context, c command, stdout io.Writer) {
	fmt.Fprintf(stdout, "Usage: hearth %s\n\n%s\n", c.usage, c.help)
	var flags bytes.Buffer
	c.run(ctx, []string{"-h"}, io.Discard, &flags)
	text := flags.String()
	if strings.HasPrefix(text, "Usage of ") {
		_, text, _ = strings.Cut(text, "\n")
	}
	if strings.TrimSpace(text) != "" {
		fmt.Fprintf(stdout, "\nFlags:\n%s", text)
	}
}
