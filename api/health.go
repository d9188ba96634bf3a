package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

type healthBody struct {
	Status string `json:"status"`
}

type readyBody struct {
	Status    string          `json:"status"`
	Templates []templateReady `json:"templates,omitempty"`
}

type templateReady struct {
	Name    string `json:"name"`
	Target  int    `json:"target"`
	Ready   int    `json:"ready"`
	Healthy bool   `json:"healthy"`
}

// healthz answers while the process serves HTTP.
func (s *server) healthz(c *gin.Context) {
	writeJSON(c, http.StatusOK, healthBody{Status: "ok"})
}

// readyz answers 200 once every pooled template has produced a working
// sandbox, else 503 with each template's progress.
func (s *server) readyz(c *gin.Context) {
	if s.core.Ready() {
		writeJSON(c, http.StatusOK, readyBody{Status: "ready"})
		return
	}
	body := readyBody{Status: "starting", Templates: []templateReady{}}
	for _, st := range s.core.PoolStats() {
		body.Templates = append(body.Templates, templateReady{
			Name: st.Template, Target: st.Target, Ready: st.Ready, Healthy: st.Healthy,
		})
	}
	writeJSON(c, http.StatusServiceUnavailable, body)
}
