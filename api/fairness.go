package api

import (
	"math"
	"strconv"

	"github.com/gin-gonic/gin"
)

// limitRate has the core take one request from the tenant's bucket,
// answering 429 when it is empty, and reports the bucket in
// RateLimit-Limit (its size), RateLimit-Remaining and RateLimit-Reset
// (seconds until it is full).
func (s *server) limitRate(c *gin.Context) {
	q, err := s.core.AdmitQuota(caller(c))
	if q.Limit > 0 {
		h := c.Writer.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(q.Limit))
		h.Set("RateLimit-Remaining", strconv.Itoa(q.Remaining))
		h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(q.Reset.Seconds()))))
	}
	if err != nil {
		s.writeError(c, err)
	}
}
