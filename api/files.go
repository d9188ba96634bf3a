package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

type filesBody struct {
	Files []runner.FileInfo `json:"files"`
}

// putFile serves PUT /v1/sessions/{id}/files?path=P: the raw body (at
// most MaxBodyBytes) becomes the file P in the session's working
// directory.
func (s *server) putFile(c *gin.Context) {
	id := sessionID(c)
	p := c.Query("path")
	if err := core.CheckPath(p); err != nil { // before the body is read
		s.writeError(c, err)
		return
	}
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if err := s.core.WriteFile(c.Request.Context(), caller(c), id, p, body); err != nil {
		s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// getFiles serves GET /v1/sessions/{id}/files: with ?path=P the raw bytes
// of file P (at most MaxBodyBytes), else the listing of the directory
// ?list=D (the working directory when D is empty or absent).
func (s *server) getFiles(c *gin.Context) {
	id := sessionID(c)
	q := c.Request.URL.Query()
	_, hasPath := q["path"]
	_, hasList := q["list"]
	if hasPath && hasList {
		s.writeError(c, invalid("invalid_path", "give either path (read a file) or list (list a directory), not both"))
		return
	}
	if hasPath {
		data, err := s.core.ReadFile(c.Request.Context(), caller(c), id, q.Get("path"), s.cfg.MaxBodyBytes)
		if err != nil {
			s.writeError(c, err)
			return
		}
		c.Data(http.StatusOK, "application/octet-stream", data)
		return
	}
	files, err := s.core.ListFiles(c.Request.Context(), caller(c), id, q.Get("list"))
	if err != nil {
		s.writeError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, filesBody{Files: files})
}
