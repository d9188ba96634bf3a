package api

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

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
	p, err := checkSessionPath("path", c.Query("path"), true)
	if err != nil {
		s.writeError(c, err)
		return
	}
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if err := s.kernels.WriteFile(c.Request.Context(), owner(c), id, p, body); err != nil {
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
		p, err := checkSessionPath("path", q.Get("path"), true)
		if err != nil {
			s.writeError(c, err)
			return
		}
		data, err := s.kernels.ReadFile(c.Request.Context(), owner(c), id, p, s.cfg.MaxBodyBytes)
		if err != nil {
			s.writeError(c, err)
			return
		}
		c.Data(http.StatusOK, "application/octet-stream", data)
		return
	}
	dir, err := checkSessionPath("list", q.Get("list"), false)
	if err != nil {
		s.writeError(c, err)
		return
	}
	files, err := s.kernels.ListFiles(c.Request.Context(), owner(c), id, dir)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if files == nil {
		files = []runner.FileInfo{}
	}
	writeJSON(c, http.StatusOK, filesBody{Files: files})
}

// checkSessionPath refuses what no file in the working directory can be
// named by: the agent in the sandbox checks the same, then resolves the
// path and refuses any that leads out (through a symbolic link). A file
// (required) is never the working directory; a directory to list may be
// "" or ".".
func checkSessionPath(param, p string, required bool) (string, error) {
	switch {
	case p == "" && required:
		return "", invalid("invalid_path", "%s is required (a path relative to the session's working directory)", param)
	case len(p) > maxPathLen:
		return "", invalid("invalid_path", "%s is too long (at most %d bytes)", param, maxPathLen)
	case strings.IndexByte(p, 0) >= 0:
		return "", invalid("invalid_path", "%s must not contain a NUL byte", param)
	case strings.HasPrefix(p, "/"):
		return "", invalid("invalid_path", "%s must be relative to the session's working directory, not absolute", param)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", invalid("invalid_path", `%s must not contain ".." components`, param)
	case p == "." && required:
		return "", invalid("invalid_path", "%s must name a file, not the working directory", param)
	case p != "" && path.Clean(p) != p:
		return "", invalid("invalid_path", `%s must be a clean path: no empty or "." components, no trailing slash`, param)
	}
	return p, nil
}
