package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
)

// logRequests logs one line per request once it is served.
func (s *server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	status := c.Writer.Status()
	level := slog.LevelInfo
	switch {
	case c.Request.URL.Path == "/readyz" && status == http.StatusServiceUnavailable:
		level = slog.LevelDebug // "not ready yet" is a state, not a failure
	case status == http.StatusServiceUnavailable:
		level = slog.LevelWarn
	case status >= http.StatusInternalServerError:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", status),
		slog.Int("bytes", c.Writer.Size()),
		slog.Duration("duration", time.Since(start)),
		slog.String("remote", c.Request.RemoteAddr),
	}
	for _, key := range []string{keyTenant, keySessionID, keyTemplate, keySandboxID} {
		if v := c.GetString(key); v != "" {
			attrs = append(attrs, slog.String(key, v))
		}
	}
	s.log.LogAttrs(c.Request.Context(), level, "request", attrs...)
}

// recoverPanics turns a handler panic into a generic 500 and logs it with
// its stack. http.ErrAbortHandler keeps its meaning.
func (s *server) recoverPanics(c *gin.Context) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		s.log.Error("panic serving request",
			"method", c.Request.Method, "path", c.Request.URL.Path,
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort()
			return
		}
		s.writeError(c, errPanic)
	}()
	c.Next()
}
