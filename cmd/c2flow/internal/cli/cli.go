// Package cli is what c2flow's commands share: the command table and its
// dispatch, flag sets whose errors are returned, and a terminal that prints
// a command's steps.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// Command is one c2flow command: its line in the usage and its run.
type Command struct {
	Summary string
	Run     func(ctx context.Context, args []string) error
}

// Dispatch runs the command args[0] names with the rest of args; no
// command, or help, prints the usage.
func Dispatch(ctx context.Context, cmds map[string]Command, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		Usage(cmds)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		Usage(cmds)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return c.Run(ctx, args[1:])
}

// Usage prints the commands, sorted, with their summaries.
func Usage(cmds map[string]Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "usage: c2flow <command> [flags]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, cmds[n].Summary)
	}
}

// NewFlags returns a flag set whose errors are returned, not fatal: main
// prints them once (the flag package would print them too), after the
// usage.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("c2flow "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fs.SetOutput(os.Stderr)
		defer fs.SetOutput(io.Discard)
		fmt.Fprintf(os.Stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
	return fs
}

// ParseInterspersed parses flags that may come after positional
// arguments (c2flow bench compare A.json B.json --plot p.svg) and returns
// the positional ones; "vs" and "--" stay as positional separators.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
