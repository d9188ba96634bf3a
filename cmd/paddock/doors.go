package main

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// doorMount adds one door's routes to the API's engine, on the one core.
// A door's file in this package appends its own to doorMounts in an init
// function, so that doors are wired without editing each other's lines.
type doorMount func(svc *core.Service, cfg *config, logger *slog.Logger) func(*gin.Engine)

// doorMounts are the doors served beside /v1, on the same listener.
var doorMounts []doorMount

// mounts binds every door to svc for api.Config.Mounts.
func mounts(svc *core.Service, cfg *config, logger *slog.Logger) []func(*gin.Engine) {
	out := make([]func(*gin.Engine), 0, len(doorMounts))
	for _, d := range doorMounts {
		out = append(out, d(svc, cfg, logger))
	}
	return out
}
