package main

import (
	"fmt"
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	graphqldoor "github.com/paddock-dev/paddock/doors/graphql"
)

// The GraphQL door: the inspection API at /v1/graphql on the API's
// listener.
func init() {
	doorMounts = append(doorMounts, func(svc *core.Service, cfg *config, logger *slog.Logger) func(*gin.Engine) {
		mount, err := graphqldoor.Mount(svc, graphqldoor.Options{Registerer: svc.Registerer(), Logger: logger,
			MaxBodyBytes: cfg.MaxBody})
		if err != nil {
			// The schema is embedded: a failure is a bug that
			// doors/graphql's tests catch, never a configuration.
			panic(fmt.Sprintf("mounting the GraphQL door: %v", err))
		}
		return mount
	})
}
