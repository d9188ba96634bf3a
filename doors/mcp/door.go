package mcpdoor

import (
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// door serves the tools for one core.
type door struct {
	core   Core
	log    *slog.Logger
	tools  []tool
	server *mcp.Server
	owned  *owned
}

// newDoor defines the tools for the core's templates and the MCP server
// that serves them.
func newDoor(c Core, version string, log *slog.Logger) (*door, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &door{core: c, log: log}
	d.owned = newOwned(c, log)
	tools, err := newTools(d, c.Templates())
	if err != nil {
		return nil, fmt.Errorf("defining MCP tools: %w", err)
	}
	d.tools = tools
	d.server = mcp.NewServer(&mcp.Implementation{Name: "paddock", Title: "Paddock", Version: version}, &mcp.ServerOptions{
		Instructions: "Paddock runs code in gVisor sandboxes without network access. Use run_code for a one-off " +
			"program; use create_session and execute when state must persist between steps or to see plots; close " +
			"sessions you no longer need.",
		Logger: log,
	})
	for _, t := range tools {
		t.add(d.server)
	}
	return d, nil
}
