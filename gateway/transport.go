package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// dialError marks a connection that was never made: the request cannot
// have reached the node.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// plan is a request's candidates in order, its body when it may be sent
// again, and what happened, for the error handler.
type plan struct {
	nodes []*nodeState
	id    string // the id the request names, if any
	body  []byte // nil: not replayable, one candidate only
	retry bool   // a refusal before start may go to the next candidate

	mu   sync.Mutex
	last *nodeState // the node of the last attempt
	sent bool       // the last attempt reached its node
}

type planKey struct{}

func planOf(ctx context.Context) *plan {
	p, _ := ctx.Value(planKey{}).(*plan)
	return p
}

// nodeTransport sends a request to its plan's candidates in turn, each
// signed with the node credential; a candidate that cannot be dialed, or
// that refuses a retryable request before starting it (refusedBefore),
// passes it to the next.
type nodeTransport struct {
	base *http.Transport
	cred *Credential
}

func newBaseTransport(dialTimeout time.Duration) *http.Transport {
	// TCP keepalives are answered by a live node's kernel however long
	// its run is silent; a node gone without a word (a partition, a
	// powered-off machine) fails its requests within about 11 s.
	d := &net.Dialer{Timeout: dialTimeout, KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3}}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, &dialError{err}
			}
			return c, nil
		},
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // a run answers when it ends
		ForceAttemptHTTP2:     false,
	}
}

func (t *nodeTransport) RoundTrip(in *http.Request) (*http.Response, error) {
	p := planOf(in.Context())
	var lastErr error
	for i, n := range p.nodes {
		u, err := url.Parse(n.URL)
		if err != nil {
			return nil, err
		}
		out := in.Clone(in.Context())
		out.URL.Scheme, out.URL.Host, out.Host = u.Scheme, u.Host, u.Host
		if p.body != nil {
			out.Body = io.NopCloser(bytes.NewReader(p.body))
			out.ContentLength = int64(len(p.body))
		}
		t.cred.Sign(out, in.Header.Get(headerClient))
		out.Header.Del(headerClient)
		p.mu.Lock()
		p.last, p.sent = n, false
		p.mu.Unlock()
		n.inflight.Add(1)
		if p.retry {
			n.placed.Add(1)
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil {
			n.inflight.Add(-1)
			var de *dialError
			if errors.As(err, &de) {
				n.set(false, nil) // seen down now, not at the next check
				lastErr = err
				if p.body != nil || in.Body == nil || in.Body == http.NoBody {
					continue
				}
				return nil, err
			}
			p.mu.Lock()
			p.sent = true
			p.mu.Unlock()
			return nil, err
		}
		if resp.Header.Get(HeaderDraining) != "" {
			n.set(false, nil) // shutting down: nothing more goes there
		}
		if p.retry && i < len(p.nodes)-1 && refusedBefore(resp) {
			resp.Body.Close()
			n.inflight.Add(-1)
			continue
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			n.inflight.Add(-1) // a WebSocket is no run in flight
		} else {
			resp.Body = &doneBody{ReadCloser: resp.Body, done: func() { n.inflight.Add(-1) }}
		}
		return resp, nil
	}
	if lastErr == nil {
		lastErr = errNoNode
	}
	return nil, lastErr
}

var errNoNode = errors.New("no node is up")

// A node shutting down answers every new request with HeaderDraining set
// (503 draining, Retry-After) and its /readyz with status StatusDraining.
const (
	HeaderDraining = "X-Paddock-Draining"
	StatusDraining = "draining"
)

// headerClient carries the caller's address from ServeHTTP to the
// transport (it never leaves the gateway).
const headerClient = "X-Paddock-Gateway-Client-Internal"

// refusedBefore reports whether resp refuses the request before anything
// ran: 429 (a node's limits: the next node's are its own), or 503 with
// Retry-After or one of the core's codes that mean nothing started.
// It leaves resp's body readable.
func refusedBefore(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
	default:
		return false
	}
	if resp.Header.Get("Retry-After") != "" {
		return true
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var e struct {
		Code any `json:"code"`
	}
	_ = json.Unmarshal(b, &e)
	code, _ := e.Code.(string)
	switch code {
	case "saturated", "template_unavailable", "template_building", "busy", "unavailable":
		return true
	}
	return strings.Contains(string(b), "not started")
}

// doneBody calls done once when the body is closed.
type doneBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
