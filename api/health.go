package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

type healthBody struct {
	Status string `json:"status"`
}

type readyBody struct {
	Status string `json:"status"`
	// ReadyTemplates names the templates that answer runs from a working
	// pool now, in configuration order: while the others fill, these
	// already serve.
	ReadyTemplates []string        `json:"ready_templates"`
	Templates      []templateReady `json:"templates"`
}

type templateReady struct {
	Name    string `json:"name"`
	Target  int    `json:"target"`
	Ready   int    `json:"ready"`   // pooled sandboxes ready now
	Healthy bool   `json:"healthy"` // the pool has produced a working sandbox
	// Image is the root filesystem: ready, building (requests are refused
	// with template_building until it is) or failed.
	Image string `json:"image"`
}

// healthz answers while the process serves HTTP.
func (s *server) healthz(c *gin.Context) {
	writeJSON(c, http.StatusOK, healthBody{Status: "ok"})
}

// readyz answers 200 once every pooled template has produced a working
// sandbox, else 503; both say which templates are ready and each one's
// progress.
func (s *server) readyz(c *gin.Context) {
	body := readyBody{Status: "starting", ReadyTemplates: []string{}, Templates: []templateReady{}}
	for _, st := range s.core.PoolStats() {
		// A template that keeps no sandbox warm starts one per run and
		// holds nothing back, once its root filesystem is there.
		if st.Image == core.ImageReady && (st.Healthy || st.Target == 0) {
			body.ReadyTemplates = append(body.ReadyTemplates, st.Template)
		}
		body.Templates = append(body.Templates, templateReady{Name: st.Template, Target: st.Target, Ready: st.Ready, Healthy: st.Healthy, Image: st.Image})
	}
	status := http.StatusServiceUnavailable
	if s.core.Ready() {
		body.Status, status = "ready", http.StatusOK
	}
	writeJSON(c, status, body)
}
