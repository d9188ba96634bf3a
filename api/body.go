package api

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// readBody reads the whole request body, at most MaxBodyBytes. A declared
// Content-Length over the cap is refused before a byte is read.
func (s *server) readBody(c *gin.Context) ([]byte, error) {
	limit := s.cfg.MaxBodyBytes
	if c.Request.ContentLength > limit {
		return nil, errBodyTooLarge
	}
	var buf bytes.Buffer
	if n := c.Request.ContentLength; n > 0 {
		buf.Grow(int(n) + 1)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errBodyTooLarge
	case err != nil && c.Request.Context().Err() != nil:
		return nil, c.Request.Context().Err()
	case err != nil:
		return nil, invalid("invalid_body", "could not read the request body")
	}
	return buf.Bytes(), nil
}
