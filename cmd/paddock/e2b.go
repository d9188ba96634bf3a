package main

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	e2bdoor "github.com/paddock-dev/paddock/doors/e2b"
)

func init() { doorMounts = append(doorMounts, e2bMount) }

// e2bMount adds the E2B-compatible door to the listener: the e2b and
// @e2b/code-interpreter SDKs reach it with E2B_API_URL and E2B_SANDBOX_URL
// set to this server and a Paddock token as E2B_API_KEY.
func e2bMount(svc *core.Service, cfg *config, logger *slog.Logger) func(*gin.Engine) {
	return e2bdoor.Mount(e2bdoor.Config{
		Core:         svc,
		MaxBodyBytes: cfg.MaxBody,
		MaxFileBytes: cfg.MaxBody,
		// Commands obey the server's maxima as cells do.
		MaxCommandTimeout: cfg.MaxTimeout,
		Logger:            logger,
	})
}
