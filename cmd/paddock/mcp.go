package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	mcpdoor "github.com/paddock-dev/paddock/doors/mcp"
)

// mcpCmd bridges an MCP host that starts a command (Claude Desktop style:
// JSON-RPC on stdin and stdout) to a running Paddock's /mcp endpoint:
// paddock mcp [--url URL] [--token-file F]; the token may also come from
// PADDOCK_TOKEN. It serves until stdin ends.
func mcpCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paddock mcp", flag.ContinueOnError)
	endpoint := fs.String("url", env("PADDOCK_URL", "http://127.0.0.1:8080"+mcpdoor.Path),
		"the running Paddock's MCP endpoint (PADDOCK_URL)")
	tokenFile := fs.String("token-file", env("PADDOCK_TOKEN_FILE", ""),
		"a file holding the bearer JWT (PADDOCK_TOKEN_FILE); PADDOCK_TOKEN holds the token itself")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	u, err := url.Parse(*endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url %q is not an http or https URL", *endpoint)
	}
	token := os.Getenv("PADDOCK_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return errors.New("--token-file: the file is empty")
		}
	}
	// Nothing but JSON-RPC may reach stdout: the host reads it.
	return mcpdoor.Bridge(ctx, mcpdoor.BridgeOptions{URL: *endpoint, Token: token, In: os.Stdin, Out: os.Stdout})
}
