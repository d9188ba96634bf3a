// Command paddock serves the Paddock API, carries its operator tools
// (serve, doctor, rootfs, token, mcp, version) and is a client of a
// running server's public API (run, session, templates, pools).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/paddock-dev/paddock/runner/runc"
)

const usage = `usage: paddock <command> [flags]

commands:
  serve    serve the API (builds missing root filesystems first)
  doctor   check this host and say what to fix
  rootfs   build (or look up) template root filesystems
  token    mint a JWT for a tenant (local use and tests)
  mcp      bridge an MCP host on stdin/stdout to a running Paddock's /mcp
  version  print the version

client commands (talk to a running server: --url or PADDOCK_URL, --token or PADDOCK_TOKEN):
  run        run a program once, streaming its output; exits with its exit code
  session    an interactive cell loop on one session
  templates  list the server's templates
  pools      list the server's pools

run "paddock <command> -h" for the command's flags.
`

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func init() {
	// When libcontainer re-executes this binary as a container's init
	// (runc runtime), it becomes that init here and never returns.
	runc.Init()
}

func main() {
	// A client command exits with its own code (the program's, or one of
	// docs/client.md's), not 0 or 1.
	if code, ok := clientMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "paddock:", err)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest)
	case "doctor":
		return doctor(ctx, rest)
	case "rootfs":
		return rootfsCmd(ctx, rest)
	case "token":
		return tokenCmd(rest, os.Stdout)
	case "mcp":
		return mcpCmd(ctx, rest)
	case "version":
		fmt.Println("paddock", version)
		return nil
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// parse binds the shared flags on a new flag set for cmd and parses args.
func parse(cmd string, args []string) (*config, *flag.FlagSet, error) {
	var c config
	fs := flag.NewFlagSet("paddock "+cmd, flag.ContinueOnError)
	c.registerFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return &c, fs, nil
}
