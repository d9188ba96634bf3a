package graphqldoor

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
)

// The operations api/openapi.yaml marks "x-door: graphql" are exactly the
// routes Mount adds (api's own test skips them).
func TestOpenAPIDocumentsTheRoutes(t *testing.T) {
	raw, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths {
		for method, op := range item {
			if op, ok := op.(map[string]any); ok && op["x-door"] == Door {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(documented)
	mount, err := Mount(&fakeCore{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	mount(e)
	var served []string
	for _, r := range e.Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("api/openapi.yaml documents %v for the GraphQL door; it serves %v", documented, served)
	}
}
