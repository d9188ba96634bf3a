package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

type templatesBody struct {
	Templates []core.TemplateInfo `json:"templates"`
	// MinLimits and MaxLimits bound what a run request may ask for.
	MinLimits Limits `json:"min_limits"`
	MaxLimits Limits `json:"max_limits"`
}

// templates lists the configured templates with their pool state.
func (s *server) templates(c *gin.Context) {
	body := templatesBody{Templates: s.core.Templates()}
	body.MinLimits, body.MaxLimits = s.core.RequestLimits()
	writeJSON(c, http.StatusOK, body)
}
