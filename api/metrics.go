package api

import "github.com/gin-gonic/gin"

// metricsHandler serves GET /metrics in the Prometheus text format: the
// core's registry (runs, executions and calls of every door, the pool,
// the process).
func (s *server) metricsHandler(c *gin.Context) {
	s.metrics.ServeHTTP(c.Writer, c.Request)
}
