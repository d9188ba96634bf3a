package main

import (
	"fmt"
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	mcpdoor "github.com/paddock-dev/paddock/doors/mcp"
)

// The MCP door: /mcp and GET /v1/tools on the API's listener.
func init() {
	doorMounts = append(doorMounts, func(svc *core.Service, cfg *config, logger *slog.Logger) func(*gin.Engine) {
		mount, err := mcpdoor.Mount(svc, mcpdoor.Options{Version: version, Logger: logger, SessionIdle: cfg.MCPSessionIdle,
			MaxBodyBytes: cfg.MaxBody})
		if err != nil {
			// The tools' schemas come from fixed Go types: a failure is a
			// bug that doors/mcp's tests catch, never a configuration.
			panic(fmt.Sprintf("mounting the MCP door: %v", err))
		}
		return mount
	})
}
