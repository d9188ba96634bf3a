package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument is the hand-written OpenAPI 3.1 description of this API.
// TestOpenAPIOperations fails when a route is missing from it, or it
// describes one the server does not have.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// openAPI serves GET /v1/openapi.yaml. It is public documentation: it
// needs no token and is not rate limited.
func (s *server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/yaml", openAPIDocument)
}
