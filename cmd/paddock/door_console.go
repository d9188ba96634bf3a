package main

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/doors/console"
)

// The web console: /console/ on the API's listener. It only serves its
// embedded page, which calls the public API from the browser; the API's
// browser guard covers it as every door.
func init() {
	doorMounts = append(doorMounts, func(_ *core.Service, _ *config, _ *slog.Logger) func(*gin.Engine) {
		return console.Mount(console.Options{Version: version})
	})
}
