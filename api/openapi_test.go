package api_test

import (
	"fmt"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// openAPIMethods are the keys of an OpenAPI path item that name
// operations; its other keys (parameters, summary…) are not operations.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// readOpenAPI parses api/openapi.yaml; the parser refuses duplicate keys.
func readOpenAPI(t *testing.T) (raw []byte, doc map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("openapi.yaml is not valid YAML: %v", err)
	}
	return raw, doc
}

// operations returns the document's operations by "METHOD /path".
func operations(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatalf("paths is %T, want a mapping", doc["paths"])
	}
	ops := map[string]map[string]any{}
	for path, item := range paths {
		item, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("paths[%q] is %T, want a mapping", path, item)
		}
		for key, op := range item {
			if !slices.Contains(openAPIMethods, key) {
				continue
			}
			op, ok := op.(map[string]any)
			if !ok {
				t.Fatalf("%s %s is %T, want a mapping", key, path, op)
			}
			ops[strings.ToUpper(key)+" "+path] = op
		}
	}
	return ops
}

func TestOpenAPIDocument(t *testing.T) {
	_, doc := readOpenAPI(t)
	if got := doc["openapi"]; got != "3.1.0" {
		t.Errorf("openapi = %#v, want \"3.1.0\"", got)
	}
	info, _ := doc["info"].(map[string]any)
	if got := info["title"]; got != "Paddock" {
		t.Errorf("info.title = %#v, want \"Paddock\"", got)
	}
	if v, _ := info["version"].(string); v == "" {
		t.Errorf("info.version = %#v, want a non-empty string", info["version"])
	}

	ops := operations(t, doc)
	if len(ops) == 0 {
		t.Fatal("the document has no operations")
	}
	ids := map[string]string{}
	for name, op := range ops {
		if s, _ := op["summary"].(string); strings.TrimSpace(s) == "" {
			t.Errorf("%s: no summary", name)
		}
		if r, _ := op["responses"].(map[string]any); len(r) == 0 {
			t.Errorf("%s: no responses", name)
		}
		id, _ := op["operationId"].(string)
		if other, dup := ids[id]; dup {
			t.Errorf("%s and %s share operationId %q", other, name, id)
		}
		ids[id] = name
	}

	// Every reference must lead somewhere.
	for _, ref := range refs(doc) {
		if _, err := resolve(doc, ref); err != nil {
			t.Errorf("$ref %q: %v", ref, err)
		}
	}
}

// refs returns every local $ref in v, sorted and without repeats.
func refs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "$ref" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// resolve follows a local JSON pointer ("#/components/…") through doc.
func resolve(doc map[string]any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("not a local reference")
	}
	var cur any = doc
	for part := range strings.SplitSeq(rest, "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is inside a %T, not a mapping", part, cur)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("no %q", part)
		}
	}
	return cur, nil
}

// ginParam matches a gin path parameter, ":id" or "*path".
var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// TestOpenAPIOperations fails when the server gains a route the document
// does not describe, or the document describes one the server lacks.
func TestOpenAPIOperations(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, false)
	engine, ok := f.h.(*gin.Engine)
	if !ok {
		t.Fatalf("api.New returned %T, want *gin.Engine", f.h)
	}
	var served []string
	for _, r := range engine.Routes() {
		served = append(served, r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(served)

	_, doc := readOpenAPI(t)
	var documented []string
	for name, op := range operations(t, doc) {
		// Another door mounts these (api.Config.Mounts); its own test
		// checks them against its routes.
		if _, door := op["x-door"]; !door {
			documented = append(documented, name)
		}
	}
	slices.Sort(documented)

	for _, op := range served {
		if !slices.Contains(documented, op) {
			t.Errorf("route %s is served but not in api/openapi.yaml", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("operation %s is in api/openapi.yaml but not served", op)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	want, _ := readOpenAPI(t)
	tests := []struct {
		name string
		cfg  api.Config
		// guarded is the status of GET /v1/templates without a token,
		// which shows whether auth is on.
		guarded int
	}{
		{name: "auth off", cfg: api.Config{}, guarded: http.StatusOK},
		{name: "auth on, no token", cfg: api.Config{Config: core.Config{Auth: api.Auth{HS256Secret: testSecret}}}, guarded: http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, tc.cfg, false)
			if got := f.do(t, http.MethodGet, "/v1/templates", "").Code; got != tc.guarded {
				t.Fatalf("GET /v1/templates = %d, want %d", got, tc.guarded)
			}
			rec := f.do(t, http.MethodGet, "/v1/openapi.yaml", "")
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200 (body %s)", rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/yaml" {
				t.Errorf("Content-Type = %q, want \"application/yaml\"", got)
			}
			if got := rec.Body.String(); got != string(want) {
				t.Errorf("body is %d bytes, want the %d bytes of api/openapi.yaml", len(got), len(want))
			}
			if got := rec.Header().Get("RateLimit-Limit"); got != "" {
				t.Errorf("RateLimit-Limit = %q, want none: the document is not rate limited", got)
			}
		})
	}
}
