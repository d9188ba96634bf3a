package egress

import (
	"fmt"
	"log/slog"
	"net/http"
)

// RefusedHeader names the reason of a refusal in the proxy's answer.
const RefusedHeader = "X-Paddock-Egress-Refused"

// A refusal is why a request does not go on: its reason, the answer's
// status and a detail fit for the sandbox (never a resolved address,
// which the log alone keeps).
type refusal struct {
	status int
	reason string
	detail string
	attrs  []any // log attributes beyond the detail
}

func (r *refusal) Error() string { return r.reason + ": " + r.detail }

func refused(status int, reason, format string, args ...any) *refusal {
	return &refusal{status: status, reason: reason, detail: fmt.Sprintf(format, args...)}
}

// statusOf is the status a policy reason answers.
func statusOf(reason string) int {
	switch reason {
	case ReasonBadHost, ReasonBadPort, ReasonBadRequest:
		return http.StatusBadRequest
	case ReasonConnLimit, ReasonByteLimit:
		return http.StatusTooManyRequests
	case ReasonResolveFailed, ReasonConnectFailed, ReasonConnectTimeout, ReasonUpstreamFailed, ReasonIdleTimeout, ReasonClosed:
		return http.StatusBadGateway
	}
	return http.StatusForbidden
}

// refuse answers ref to the client, logs it and counts it.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, ref *refusal) {
	p.note(r.Method, r.Host, ref, "egress refused")
	h := w.Header()
	h.Set(RefusedHeader, ref.reason)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Connection", "close")
	w.WriteHeader(ref.status)
	fmt.Fprintf(w, "egress refused: %s: %s\n", ref.reason, ref.detail)
}

// cut logs and counts a connection the proxy ends for ref, once its
// answer has begun.
func (p *Proxy) cut(r *http.Request, ref *refusal) {
	p.note(r.Method, r.Host, ref, "egress connection cut")
}

// note logs and counts ref; method is the request's (CONNECT, GET…, or
// TLS and DNS for the transparent listeners) and target what it named.
func (p *Proxy) note(method, target string, ref *refusal, msg string) {
	p.counters.refuse(ref.reason)
	p.metrics.refused.WithLabelValues(ref.reason).Inc()
	attrs := append([]any{
		slog.String("sandbox_id", p.sandbox),
		slog.String("reason", ref.reason),
		slog.String("detail", ref.detail),
		slog.String("method", method),
		slog.String("target", target),
	}, ref.attrs...)
	p.log.Info(msg, attrs...)
}
