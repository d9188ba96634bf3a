package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// answer is one node's answer to a fanned-out request.
type answer struct {
	node   *nodeState
	status int
	header http.Header
	body   []byte
	err    error
}

// maxFanOutBytes caps one node's answer to a list, metrics or GraphQL.
const maxFanOutBytes = 32 << 20

// ask sends r (with body) to every up node at once and returns their
// answers in node order; the down ones are left out and named.
func (g *Gateway) ask(r *http.Request, body []byte) (answers []answer, down []string) {
	nodes := g.t.nodes()
	out := make([]answer, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		if up, _, _ := n.status(); !up {
			out[i] = answer{node: n, err: errNoNode}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = g.askOne(r.Context(), r, n, body)
		}()
	}
	wg.Wait()
	for _, a := range out {
		if a.err != nil {
			down = append(down, a.node.Name)
			continue
		}
		answers = append(answers, a)
	}
	return answers, down
}

func (g *Gateway) askOne(ctx context.Context, in *http.Request, n *nodeState, body []byte) answer {
	req, err := http.NewRequestWithContext(ctx, in.Method, n.URL+in.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return answer{node: n, err: err}
	}
	req.Header = in.Header.Clone()
	req.Header.Del(headerClient)
	req.Header.Del("Accept-Encoding") // merged as text
	g.cfg.Credential.Sign(req, in.Header.Get(headerClient))
	resp, err := g.base.RoundTrip(req)
	if err != nil {
		return answer{node: n, err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFanOutBytes))
	return answer{node: n, status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// fanOut answers a list (sessions, kernels, E2B sandboxes) with every
// up node's items: arrays are joined, and in an object each array field
// is; the rest is the first node's. A node's refusal (401, 403…) is the
// answer as it is. X-Paddock-Nodes-Down names the nodes left out.
func (g *Gateway) fanOut(w http.ResponseWriter, r *http.Request) {
	answers, down := g.ask(r, nil)
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

func copyAnswer(w http.ResponseWriter, a answer) {
	for k, v := range a.header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// mergeJSON joins the answers' arrays (see fanOut).
func mergeJSON(answers []answer) ([]byte, bool) {
	var vs []any
	for _, a := range answers {
		var v any
		if err := json.Unmarshal(a.body, &v); err != nil {
			return nil, false
		}
		vs = append(vs, v)
	}
	b, err := json.Marshal(merge(vs))
	return b, err == nil
}

// merge joins arrays, and objects field by field; any other value is
// the first one's.
func merge(vs []any) any {
	switch first := vs[0].(type) {
	case []any:
		// Items every node lists alike (a template) appear once.
		out, seen := []any{}, map[string]bool{}
		for _, v := range vs {
			a, _ := v.([]any)
			for _, item := range a {
				b, _ := json.Marshal(item)
				if !seen[string(b)] {
					seen[string(b)] = true
					out = append(out, item)
				}
			}
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, fv := range first {
			var parts []any
			for _, v := range vs {
				if m, ok := v.(map[string]any); ok && m[k] != nil {
					parts = append(parts, m[k])
				}
			}
			if len(parts) == 0 {
				out[k] = fv
				continue
			}
			out[k] = merge(parts)
		}
		return out
	}
	return vs[0]
}
