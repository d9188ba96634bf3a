package gateway

import (
	"net/http"
	"strings"
)

// route is where a request goes.
type route int

const (
	routeAny   route = iota // any up node: every node answers alike
	routeID                 // the node an id names
	routePlace              // a new run or session: rank or byKey
	routeAll                // a list: every node, merged
	routeSelf               // the gateway's own probes
	routeMetrics
	routeGraphQL
	routeMCP // by the Mcp-Session-Id the gateway handed out, else placed
)

// classify says where r goes and, for routeID, the id.
func classify(r *http.Request) (route, string) {
	p := r.URL.Path
	if id := r.Header.Get("E2b-Sandbox-Id"); id != "" {
		return routeID, id // an E2B in-sandbox call (envd, the interpreter)
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	get := r.Method == http.MethodGet
	post := r.Method == http.MethodPost
	switch {
	case p == "/healthz" || p == "/readyz":
		return routeSelf, ""
	case p == "/metrics":
		return routeMetrics, ""
	case p == "/v1/graphql":
		return routeGraphQL, ""
	case p == "/mcp":
		return routeMCP, ""
	case p == "/v1/run" && post:
		return routePlace, ""
	}
	// Collections: create places, list merges; members go by id.
	for _, col := range [][]string{{"v1", "sessions"}, {"api", "kernels"}, {"api", "sessions"}, {"sandboxes"}, {"v2", "sandboxes"}} {
		n := len(col)
		if len(seg) < n || !equal(seg[:n], col) {
			continue
		}
		switch {
		case len(seg) == n && post:
			return routePlace, ""
		case len(seg) == n && get:
			return routeAll, ""
		case len(seg) > n:
			return routeID, seg[n]
		}
	}
	if p == "/v1/admin/sessions" && get {
		return routeAll, ""
	}
	return routeAny, ""
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// tagOf is the node tag an id carries: its first TagLen hex digits, the
// dashes of a Jupyter UUID aside; "" when it carries none.
func tagOf(id string) string {
	s := strings.ReplaceAll(id, "-", "")
	if len(s) < TagLen {
		return ""
	}
	for _, r := range s[:TagLen] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return ""
		}
	}
	return s[:TagLen]
}
