package main

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	jupyterdoor "github.com/paddock-dev/paddock/doors/jupyter"
)

// The Jupyter door: kernels REST and WebSocket under /api.
func init() {
	doorMounts = append(doorMounts, func(svc *core.Service, cfg *config, logger *slog.Logger) func(*gin.Engine) {
		return func(r *gin.Engine) {
			jupyterdoor.Mount(r, svc, jupyterdoor.Options{MaxMessageBytes: cfg.MaxBody, Logger: logger.With("door", "jupyter"),
				IDPrefix: cfg.idPrefix()})
		}
	})
}
