package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/internal/edge"
)

// limitRate has the core take one request from the tenant's bucket,
// answering 429 when it is empty, and reports the bucket in
// RateLimit-Limit (its size), RateLimit-Remaining and RateLimit-Reset
// (seconds until it is full).
func (s *server) limitRate(c *gin.Context) {
	q, err := s.core.AdmitQuota(caller(c))
	edge.RateLimit(c.Writer.Header(), q)
	if err != nil {
		s.writeError(c, err)
	}
}
