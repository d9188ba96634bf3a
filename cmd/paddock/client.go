package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes of the client commands (run, session, templates, pools). A
// program that ran exits the client with its own code; a Paddock reason
// or a failure to get an answer has a code of its own, listed in
// docs/client.md.
const (
	exitOK           = 0
	exitUsage        = 2
	exitSandboxError = 119 // reason sandbox_error, or a reason this client does not know
	exitOutputLimit  = 120
	exitPidsLimit    = 121
	exitDiskLimit    = 122
	exitKilled       = 123
	// exitRunInterrupted: reason interrupted, the server died during the
	// run (an idempotent run's replay says so).
	exitRunInterrupted = 125
	exitTimeout        = 124 // as coreutils timeout
	exitOOM            = 137 // as a process the kernel's OOM killer ended
	exitUnreachable    = 110 // no HTTP answer from the server
	exitAuth           = 111 // 401 or 403
	exitRefused        = 112 // another 4xx: the server refused the request
	exitServer         = 113 // a 5xx
	exitProtocol       = 114 // an answer this client cannot read, or a stream cut short
	exitLocal          = 115 // a local file could not be read or written
	exitInterrupted    = 130 // Ctrl-C before the answer came
)

// reasonExit is the exit code of each Paddock reason other than ok and
// error, which exit with the program's own code.
var reasonExit = map[string]int{
	"timeout":       exitTimeout,
	"oom":           exitOOM,
	"output_limit":  exitOutputLimit,
	"pids_limit":    exitPidsLimit,
	"disk_limit":    exitDiskLimit,
	"killed":        exitKilled,
	"sandbox_error": exitSandboxError,
	"interrupted":   exitRunInterrupted,
}

// runExit is the client's exit code for a run that ended with reason and
// the program's exit code.
func runExit(reason string, code int) int {
	switch reason {
	case "ok":
		return exitOK
	case "error":
		if code <= 0 || code > 255 {
			return 1 // failed without a usable code of its own
		}
		return code
	}
	if c, ok := reasonExit[reason]; ok {
		return c
	}
	return exitSandboxError
}

// clientIO is where a client command reads and writes.
type clientIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// clientCommands maps each client subcommand to its body.
var clientCommands = map[string]func(context.Context, []string, clientIO) int{
	"run":       clientRun,
	"session":   clientSession,
	"templates": clientTemplates,
	"pools":     clientPools,
}

// clientMain runs a client subcommand and reports its exit code; ok is
// false when args name no client subcommand. Ctrl-C or SIGTERM cancels
// the command's context: a run's request is dropped (the server then
// ends the run) and a session is deleted.
func clientMain(args []string) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	cmd, found := clientCommands[args[0]]
	if !found {
		return 0, false
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd(ctx, args[1:], clientIO{os.Stdin, os.Stdout, os.Stderr}), true
}

// remoteFlags are the flags every client command shares.
type remoteFlags struct {
	url, token string
	json       bool
}

func (r *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.url, "url", env("PADDOCK_URL", "http://127.0.0.1:8080"), "the server's base URL (env PADDOCK_URL)")
	// The token's default is read after parsing (defaultToken), so that
	// -h never prints it.
	fs.StringVar(&r.token, "token", "", "bearer token sent to the server (default: env PADDOCK_TOKEN)")
	fs.BoolVar(&r.json, "json", false, "print the server's JSON answer instead of text")
}

// defaultToken fills in PADDOCK_TOKEN when --token was not given.
func (r *remoteFlags) defaultToken() {
	if r.token == "" {
		r.token = env("PADDOCK_TOKEN", "")
	}
}

// newClientFlags is a flag set for a client command that writes its
// messages, and its synopsis above the flags on -h, to w.
func newClientFlags(name, synopsis string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("paddock "+name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: paddock %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// usageExit reports a usage problem and returns its exit code; -h exits 0.
func usageExit(w io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintln(w, "paddock:", err)
	return exitUsage
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
