package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
)

// cmdFlags is the flag set of one run of one command. Parse turns a help
// request, a bad flag and surplus arguments into a *usageError, which run
// prints once, with the command's usage; the flag package itself prints
// nothing. Flags may come before, between or after the arguments (hearth
// ask "fix it" --yes); a literal -- ends the flags, so that an argument may
// begin with - (hearth ask -- "-v: what does it do?").
type cmdFlags struct {
	*flag.FlagSet
	maxArgs int      // positional arguments the command takes; -1: any number
	args    []string // the positional arguments, once parsed
}

// newFlags returns the flag set of the command name; the positional
// arguments it accepts come from the command table. stderr is unused: every
// message goes through the *usageError Parse returns.
func newFlags(name string, _ io.Writer) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	maxArgs := -1
	if c, ok := lookup(name); ok {
		maxArgs = c.maxArgs
	}
	return &cmdFlags{FlagSet: fs, maxArgs: maxArgs}
}

// Parse parses args; see cmdFlags.
func (f *cmdFlags) Parse(args []string) error {
	f.args = nil
	for {
		err := f.FlagSet.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return &usageError{flags: f.FlagSet, help: true}
		case err != nil:
			err = f.respell(err)
			if len(f.args) > 0 && strings.HasPrefix(err.Error(), "unknown flag") {
				err = fmt.Errorf("%w; an argument that begins with - goes after --: hearth %s [flags] -- %s", err, f.Name(), strings.Join(f.args, " ")+" …")
			}
			return &usageError{flags: f.FlagSet, err: err}
		}
		rest := f.FlagSet.Args()
		used := len(args) - len(rest)
		if len(rest) == 0 || used > 0 && args[used-1] == "--" {
			f.args = append(f.args, rest...) // after --, everything is an argument
			break
		}
		f.args = append(f.args, rest[0]) // an argument; flags may follow it
		args = rest[1:]
	}
	if f.maxArgs >= 0 && len(f.args) > f.maxArgs {
		return &usageError{flags: f.FlagSet, err: surplus(f.Name(), f.maxArgs, f.args)}
	}
	return nil
}

// Args, NArg and Arg are the positional arguments, wherever they stood
// among the flags.
func (f *cmdFlags) Args() []string { return f.args }
func (f *cmdFlags) NArg() int      { return len(f.args) }
func (f *cmdFlags) Arg(i int) string {
	if i < 0 || i >= len(f.args) {
		return ""
	}
	return f.args[i]
}

// usageError is a command line the command cannot run: help asked for,
// or a mistake in its flags or arguments. It carries the flag set so
// that run can print the command's flags.
type usageError struct {
	flags *flag.FlagSet
	help  bool  // -h, -help or --help
	err   error // the mistake, when not help
}

func (e *usageError) Error() string {
	if e.help {
		return "help requested"
	}
	return e.err.Error()
}

// surplus says which arguments a command does not take.
func surplus(cmd string, max int, args []string) error {
	extra := strings.Join(quoteAll(args[max:]), " ")
	if max == 0 {
		return fmt.Errorf("%s takes no arguments; remove %s", cmd, extra)
	}
	return fmt.Errorf("%s takes at most %s; remove %s", cmd, plural(max, "argument"), extra)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// flagErrors are the flag package's messages, reworded with the flag
// spelled as the usage spells it (--name) and the value it wants.
var flagErrors = []struct {
	re   *regexp.Regexp
	with func(f *cmdFlags, m []string) string
}{
	{regexp.MustCompile(`^flag provided but not defined: -(.+)$`), func(_ *cmdFlags, m []string) string {
		return "unknown flag " + dashed(m[1])
	}},
	{regexp.MustCompile(`^flag needs an argument: -(.+)$`), func(f *cmdFlags, m []string) string {
		return "flag " + dashed(m[1]) + " needs a value: " + f.wants(m[1])
	}},
	{regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`), func(f *cmdFlags, m []string) string {
		why := m[3]
		if why == "parse error" { // strconv's, which says nothing more
			why = "want " + f.wants(m[2])
		}
		return "invalid value " + m[1] + " for " + dashed(m[2]) + ": " + why
	}},
}

func (f *cmdFlags) respell(err error) error {
	msg := err.Error()
	for _, fe := range flagErrors {
		if m := fe.re.FindStringSubmatch(msg); m != nil {
			return errors.New(fe.with(f, m))
		}
	}
	return err
}

// wants describes the value the flag name takes.
func (f *cmdFlags) wants(name string) string {
	fl := f.Lookup(name)
	if fl == nil {
		return "a value"
	}
	typ, _ := flag.UnquoteUsage(fl)
	switch typ {
	case "":
		return "true or false"
	case "int", "uint":
		return "a whole number"
	case "float":
		return "a number"
	case "duration":
		return "a duration such as 500ms, 30s or 5m"
	}
	return "a " + typ
}

// dashed is a flag's name as written on the command line: -f for a
// one-letter flag, --name for the others (Go's flag package takes both
// forms of each).
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagsText lists a command's flags for its help: each flag with its
// value's type, then what it does and its default.
func flagsText(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		b.WriteString("  " + dashed(f.Name))
		if typ != "" {
			b.WriteString(" " + typ)
		}
		b.WriteString("\n        " + strings.ReplaceAll(usage, "\n", "\n        "))
		if !zeroDefault(f) {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					fmt.Fprintf(&b, " (default %q)", f.DefValue)
				} else {
					fmt.Fprintf(&b, " (default %s)", f.DefValue)
				}
			}
		}
		b.WriteString("\n")
	})
	return b.String()
}

// zeroDefault reports whether f's default is its type's zero value, which
// help does not mention (as the flag package's own listing does not).
func zeroDefault(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	if t.Kind() != reflect.Pointer {
		return f.DefValue == ""
	}
	zero, ok := reflect.New(t.Elem()).Interface().(flag.Value)
	return ok && f.DefValue == zero.String()
}
