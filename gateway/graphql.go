package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// ids in a GraphQL query or its variables: Paddock's 32 hex digits, or
// the Jupyter door's UUID form of them.
var queryID = regexp.MustCompile(`[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}`)

// graphql forwards a query that names an id some node made to that node
// (the first such id decides); any other query goes to every up node and
// their answers are merged as lists are (fanOut): each list field joins
// the nodes' items, each other field is the first node's.
func (g *Gateway) graphql(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is over %d bytes", g.cfg.MaxBodyBytes))
		return
	}
	text := string(body) + " " + r.URL.RawQuery
	for _, id := range queryID.FindAllString(strings.ToLower(text), -1) {
		if n := g.t.byTagOf(tagOf(id)); n != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			g.toID(w, r, id)
			return
		}
	}
	answers, down := g.ask(r, body)
	if len(answers) == 0 {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", "no Paddock node behind this gateway is up")
		return
	}
	for _, a := range answers {
		if a.status != http.StatusOK {
			copyAnswer(w, a)
			return
		}
	}
	merged, ok := mergeJSON(answers)
	if !ok {
		copyAnswer(w, answers[0])
		return
	}
	if len(down) > 0 {
		w.Header().Set("X-Paddock-Nodes-Down", strings.Join(down, ","))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(merged, '\n'))
}
