package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultCheckEvery   = time.Second
	DefaultDialTimeout  = time.Second
	DefaultMaxBodyBytes = 10 << 20
)

// Config configures a gateway.
type Config struct {
	// Source gives the node set. Required.
	Source Source
	// Credential signs every forwarded request. Required.
	Credential *Credential
	// Authenticate checks the caller's token as the nodes will: it
	// returns the tenant, whether the request carried a token at all,
	// and the refusal of a bad one. Nil means authentication is off.
	Authenticate func(r *http.Request) (tenant string, present bool, err error)
	// CheckEvery is how often every node's /readyz is asked.
	CheckEvery time.Duration
	// DialTimeout bounds connecting to a node.
	DialTimeout time.Duration
	// MaxBodyBytes caps the request bodies the gateway reads to place
	// them (runs, creates, GraphQL queries).
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// Gateway is the tier's front: an http.Handler.
type Gateway struct {
	cfg   Config
	t     *tracker
	proxy *httputil.ReverseProxy
	base  *http.Transport
	log   *slog.Logger
}

// New returns a gateway; Start begins its health checks.
func New(cfg Config) (*Gateway, error) {
	if cfg.Source == nil || cfg.Credential == nil {
		return nil, errors.New("gateway: Source and Credential are required")
	}
	cfg.CheckEvery = cmp.Or(cfg.CheckEvery, DefaultCheckEvery)
	cfg.DialTimeout = cmp.Or(cfg.DialTimeout, DefaultDialTimeout)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	g := &Gateway{cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)), base: newBaseTransport(cfg.DialTimeout)}
	g.t = &tracker{src: cfg.Source, every: cfg.CheckEvery,
		client: &http.Client{Transport: newBaseTransport(cfg.DialTimeout), Timeout: cfg.CheckEvery + time.Second}}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:        func(*httputil.ProxyRequest) {},
		Transport:      &nodeTransport{base: g.base, cred: cfg.Credential},
		FlushInterval:  -1, // SSE, NDJSON and chunked answers pass as they come
		ModifyResponse: g.modifyResponse,
		ErrorHandler:   g.proxyError,
	}
	return g, nil
}

// Start checks every node once, then keeps checking until ctx ends.
func (g *Gateway) Start(ctx context.Context) {
	g.t.checkAll(ctx)
	go g.t.run(ctx)
}

// Ready reports whether some node is up.
func (g *Gateway) Ready() bool { return g.t.anyUp() != nil }

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(HeaderCredential) // a caller's own is never passed on
	r.Header.Set(headerClient, r.RemoteAddr)
	rt, id := classify(r)
	if rt == routeSelf {
		g.probe(w, r)
		return
	}
	tenant, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	switch rt {
	case routeMetrics:
		g.metrics(w, r)
	case routeGraphQL:
		g.graphql(w, r)
	case routeAll:
		g.fanOut(w, r)
	case routeID:
		g.toID(w, r, id)
	case routeMCP:
		g.mcp(w, r)
	case routePlace:
		g.place(w, r, tenant)
	default:
		n := g.t.anyUp()
		if n == nil {
			writeError(w, http.StatusServiceUnavailable, "node_unavailable", "no Paddock node behind this gateway is up")
			return
		}
		g.forward(w, r, &plan{nodes: []*nodeState{n}})
	}
}

// authenticate checks the caller's token before anything is placed,
// fanned out or forwarded by id. A request with a bad token, or none
// where every node wants one, goes to one node only, the first up by
// name, on every gateway: that node refuses it in its door's own shape
// and counts the failure against the caller's address (the credential
// carries it), so the failed-authentication limit holds across the
// gateways. E2B in-sandbox calls (bound by their sandbox's access tokens)
// and the console's files are the nodes' to check.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if g.cfg.Authenticate == nil || r.Header.Get("E2b-Sandbox-Id") != "" {
		return "", true
	}
	tenant, present, err := g.cfg.Authenticate(r)
	if err == nil && (present || !needsToken(r)) {
		return tenant, true
	}
	n := g.t.anyUp()
	if n == nil {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", "no Paddock node behind this gateway is up")
		return "", false
	}
	g.forward(w, r, &plan{nodes: []*nodeState{n}})
	return "", false
}

func needsToken(r *http.Request) bool {
	p := r.URL.Path
	if r.Header.Get("E2b-Sandbox-Id") != "" || p == "/v1/openapi.yaml" {
		return false
	}
	return strings.HasPrefix(p, "/v1/") || p == "/mcp" || p == "/metrics" ||
		strings.HasPrefix(p, "/api/kernels") || strings.HasPrefix(p, "/api/sessions") || strings.Contains(p, "sandboxes")
}

func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, p *plan) {
	g.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), planKey{}, p)))
}

// toID forwards to the node id names: 404 when none does, 503 at once
// when it is down.
func (g *Gateway) toID(w http.ResponseWriter, r *http.Request, id string) {
	n := g.t.byTagOf(tagOf(id))
	if n == nil {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no node of this tier made %q (an id begins with its node's tag)", id))
		return
	}
	if up, checked, _ := n.status(); checked && !up {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", lostMessage(n, id))
		return
	}
	g.forward(w, r, &plan{nodes: []*nodeState{n}, id: id})
}

func lostMessage(n *nodeState, id string) string {
	return fmt.Sprintf("node %s, which holds %s, is unavailable: its sessions, E2B sandboxes and kernels cannot be reached "+
		"(they are lost unless the node comes back with its state directory)", n.Name, id)
}

// place sends a run or a create to the best node, and on to the next
// when one refuses before starting it. A run with an Idempotency-Key
// goes by its key, so that a retry of it finds its first answer.
func (g *Gateway) place(w http.ResponseWriter, r *http.Request, tenant string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is over %d bytes", g.cfg.MaxBodyBytes))
		return
	}
	var req struct {
		Template string `json:"template"`
		Language string `json:"language"`
		Kernel   *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"kernel"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &req)
	if req.Kernel != nil && req.Kernel.ID != "" { // a Jupyter session on an existing kernel
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.toID(w, r, req.Kernel.ID)
		return
	}
	var nodes []*nodeState
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		nodes = g.t.byKey(tenant, key)
	} else {
		tmpl := cmp.Or(req.Template, req.Language, req.Name)
		if req.Kernel != nil {
			tmpl = cmp.Or(req.Kernel.Name, tmpl)
		}
		nodes = g.t.rank(tmpl)
	}
	if len(nodes) == 0 {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", "no Paddock node behind this gateway is up")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.forward(w, r, &plan{nodes: nodes, body: body, retry: true})
}

// proxyError answers a request no node took: 503 node_unavailable when
// none could be reached (nothing ran), 502 node_lost when the node
// failed after taking it (it may have run; it is not retried).
func (g *Gateway) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	p := planOf(r.Context())
	var n *nodeState
	sent := false
	if p != nil {
		p.mu.Lock()
		n, sent = p.last, p.sent
		p.mu.Unlock()
	}
	if r.Context().Err() != nil {
		return // the caller went away
	}
	name := "?"
	if n != nil {
		name = n.Name
	}
	g.log.Warn("forwarding failed", "node", name, "path", r.URL.Path, "sent", sent, "err", err)
	if !sent {
		msg := fmt.Sprintf("node %s is unavailable (%v); nothing ran there", name, err)
		if n != nil && p.id != "" {
			msg = lostMessage(n, p.id)
		}
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", msg)
		return
	}
	if n != nil {
		n.set(false, nil)
	}
	writeError(w, http.StatusBadGateway, "node_lost",
		fmt.Sprintf("node %s failed while serving this request: it may have started and was not retried; its sessions are unavailable until it returns", name))
}

func (g *Gateway) modifyResponse(resp *http.Response) error {
	p := planOf(resp.Request.Context())
	if p == nil {
		return nil
	}
	p.mu.Lock()
	n := p.last
	p.mu.Unlock()
	if n == nil {
		return nil
	}
	resp.Header.Set("X-Paddock-Node", n.Name)
	if tail := lostTail(resp.Header.Get("Content-Type"), n.Name); tail != nil {
		resp.Body = &tailOnError{ReadCloser: resp.Body, tail: tail}
	}
	if id := resp.Header.Get(mcpSessionHeader); id != "" {
		resp.Header.Set(mcpSessionHeader, Tag(n.Name)+"."+id)
	}
	return nil
}

// probe answers the gateway's own /healthz and /readyz: ready while some
// node is up, with each node's state.
func (g *Gateway) probe(w http.ResponseWriter, r *http.Request) {
	type nodeBody struct {
		Name  string         `json:"name"`
		Up    bool           `json:"up"`
		Ready map[string]int `json:"ready"`
	}
	body := struct {
		Status string     `json:"status"`
		Role   string     `json:"role"`
		Nodes  []nodeBody `json:"nodes"`
	}{Status: "ok", Role: "gateway", Nodes: []nodeBody{}}
	status := http.StatusOK
	if r.URL.Path == "/readyz" {
		body.Status = "ready"
		if !g.Ready() {
			body.Status, status = "starting", http.StatusServiceUnavailable
		}
		for _, n := range g.t.nodes() {
			up, _, ready := n.status()
			body.Nodes = append(body.Nodes, nodeBody{Name: n.Name, Up: up, Ready: ready})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
