package api

import (
	"strconv"

	"github.com/gin-gonic/gin"
)

// limitRate takes one request from the tenant's bucket, answering 429
// when it is empty, and reports the bucket in RateLimit-Limit (its size),
// RateLimit-Remaining and RateLimit-Reset (seconds until it is full).
func (s *server) limitRate(c *gin.Context) {
	q, ok, err := s.tenants.allow(owner(c))
	if ok {
		h := c.Writer.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(q.limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(q.remaining))
		h.Set("RateLimit-Reset", strconv.Itoa(q.reset))
	}
	if err != nil {
		s.writeError(c, err)
	}
}

// startRun holds one of the tenant's one-shot run slots until done.
func (s *server) startRun(c *gin.Context) (done func(), err error) {
	return s.tenants.startRun(owner(c))
}

// startCreate holds one of the tenant's session slots, counting the
// sessions it already has, until done.
func (s *server) startCreate(c *gin.Context) (done func(), err error) {
	tenant := owner(c)
	live := func() int { return len(s.kernels.List(tenant)) }
	return s.tenants.startCreate(tenant, live, s.kernels.Config().ReapInterval)
}
