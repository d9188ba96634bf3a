package egress

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/url"
)

// serveForward relays one absolute-form http:// request to the checked
// upstream address, on a connection of its own closed after the answer.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		p.refuse(w, r, refused(http.StatusBadRequest, ReasonBadRequest,
			"the proxy takes CONNECT host:port or an absolute http:// URL"))
		return
	}
	host, port, ref := splitTarget(r.URL.Host, 80)
	if ref != nil {
		p.refuse(w, r, ref)
		return
	}
	name, _, _ := normalizeName(host)
	secrets := p.secrets[name]
	if secrets != nil {
		port = secretTLSPort(port) // the proxy speaks TLS to a secret host (secrets.go)
	}
	up, ref := p.open(r.Context(), host, port)
	if ref != nil {
		p.refuse(w, r, ref)
		return
	}
	defer up.Close()

	out := outgoing(r, secrets)
	var conn io.ReadWriter = up
	if secrets != nil {
		if conn, ref = p.secretConn(r.Context(), up, name, port, out); ref != nil {
			p.refuse(w, r, ref)
			return
		}
	}
	if err := out.Write(conn); err != nil {
		p.refuse(w, r, upstreamRefusal(up, "sending the request upstream failed", err))
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), out)
	if err != nil {
		p.refuse(w, r, upstreamRefusal(up, "the upstream's answer is not HTTP", err))
		return
	}
	defer resp.Body.Close()
	stripHop(resp.Header)
	scrubSecrets(resp.Header, secrets)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if err := copyBytes(w, resp.Body, nil); err != nil {
		if reason := up.limit(); reason != "" {
			p.cut(r, refused(0, reason, "%s", cutDetail(reason)))
		}
		// A cut answer must not look whole: end the client's connection.
		panic(http.ErrAbortHandler)
	}
}

// outgoing is the request sent upstream: origin-form, hop-by-hop and
// Proxy-* headers removed, the operator's secrets set, and Connection:
// close.
func outgoing(r *http.Request, secrets http.Header) *http.Request {
	h := r.Header.Clone()
	stripHop(h)
	for k, vs := range secrets {
		h[k] = append([]string(nil), vs...)
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // send none rather than Go's
	}
	u := &url.URL{Scheme: "http", Host: r.URL.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery, Opaque: r.URL.Opaque}
	out := &http.Request{
		Method:        r.Method,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          r.Body,
		ContentLength: r.ContentLength,
		Host:          r.URL.Host,
		Close:         true,
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	return out
}

// upstreamRefusal is the refusal for a failed exchange: the limit that
// cut it, or upstream_failed.
func upstreamRefusal(up *upstream, detail string, err error) *refusal {
	reason := up.limit()
	if reason == "" && errors.Is(err, errByteLimit) {
		reason = ReasonByteLimit
	}
	if reason != "" {
		return refused(statusOf(reason), reason, "%s", cutDetail(reason))
	}
	ref := refused(http.StatusBadGateway, ReasonUpstreamFailed, "%s", detail)
	ref.attrs = []any{"error", err.Error()}
	return ref
}
