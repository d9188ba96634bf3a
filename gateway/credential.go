package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The node credential: every request a gateway forwards carries
//
//	X-Paddock-Gateway: v1 <unix seconds> <client address> <hex HMAC-SHA256>
//
// where the HMAC, keyed with the secret the gateways and nodes share,
// covers the version, the time, the client address, the method and the
// request URI. A node takes it within CredentialSkew of its own clock,
// so a captured header is good for that long and for that request line
// only; the client address it carries becomes the request's peer on the
// node, so that the node's per-address limits count callers, not the
// gateway.
const (
	HeaderCredential = "X-Paddock-Gateway"
	credentialV1     = "v1"
	CredentialSkew   = 30 * time.Second
	// MinSecretBytes is the shortest shared secret accepted.
	MinSecretBytes = 32
)

// Errors of Verify; their text is the refusal's message.
var (
	ErrNoCredential  = errors.New("this is a Paddock node: it serves only requests forwarded by a Paddock gateway (no " + HeaderCredential + " header)")
	ErrBadCredential = errors.New("the " + HeaderCredential + " credential is malformed, expired or not signed with this tier's node credential")
)

// Credential signs and checks the gateway-to-node header.
type Credential struct {
	secret []byte
	now    func() time.Time
}

// NewCredential returns the credential keyed with secret (at least
// MinSecretBytes); now nil means time.Now.
func NewCredential(secret []byte, now func() time.Time) (*Credential, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("node credential is %d bytes, want at least %d", len(secret), MinSecretBytes)
	}
	if now == nil {
		now = time.Now
	}
	return &Credential{secret: append([]byte(nil), secret...), now: now}, nil
}

func (c *Credential) mac(ts, client, method, uri string) string {
	m := hmac.New(sha256.New, c.secret)
	for _, p := range []string{credentialV1, ts, client, method, uri} {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Sign sets r's credential for a request from client (an address, or ""
// when unknown).
func (c *Credential) Sign(r *http.Request, client string) {
	if client == "" || strings.ContainsAny(client, " \t\r\n") {
		client = "-"
	}
	ts := strconv.FormatInt(c.now().Unix(), 10)
	r.Header.Set(HeaderCredential, strings.Join([]string{credentialV1, ts, client, c.mac(ts, client, r.Method, r.URL.RequestURI())}, " "))
}

// Verify checks r's credential and returns the client address it names
// ("" when the gateway knew none).
func (c *Credential) Verify(r *http.Request) (string, error) {
	h := r.Header.Get(HeaderCredential)
	if h == "" {
		return "", ErrNoCredential
	}
	f := strings.Split(h, " ")
	if len(f) != 4 || f[0] != credentialV1 {
		return "", ErrBadCredential
	}
	sec, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return "", ErrBadCredential
	}
	if d := c.now().Sub(time.Unix(sec, 0)); d > CredentialSkew || d < -CredentialSkew {
		return "", ErrBadCredential
	}
	want := c.mac(f[1], f[2], r.Method, r.URL.RequestURI())
	if !hmac.Equal([]byte(f[3]), []byte(want)) {
		return "", ErrBadCredential
	}
	if f[2] == "-" {
		return "", nil
	}
	return f[2], nil
}

// RequireCredential wraps a node's handler: every request but the
// probes (/healthz, /readyz: a kubelet sends no credential, and they
// tell nothing but the pools' fill) must carry a valid credential, or is
// refused with 401 and a message saying so. A valid one's client address
// becomes r.RemoteAddr, and the header is dropped.
func RequireCredential(h http.Handler, c *Credential) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			h.ServeHTTP(w, r)
			return
		}
		client, err := c.Verify(r)
		if err != nil {
			writeError(w, http.StatusUnauthorized, "gateway_credential_required", err.Error())
			return
		}
		r.Header.Del(HeaderCredential)
		if client != "" {
			r.RemoteAddr = client
		}
		h.ServeHTTP(w, r)
	})
}
