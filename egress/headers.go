package egress

import (
	"net/http"
	"strings"
)

// hopByHop are the headers of one connection, never forwarded
// (RFC 9110 §7.6.1), with Expect, which the proxy does not relay.
var hopByHop = []string{
	"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect",
}

// stripHop deletes from h the hop-by-hop headers, those the Connection
// header names, and every Proxy-* header.
func stripHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopByHop {
		h.Del(name)
	}
	for name := range h {
		if strings.HasPrefix(name, "Proxy-") {
			delete(h, name)
		}
	}
}

// scrubSecrets deletes from an answer's headers those named as a secret
// and any whose value holds a secret's value.
func scrubSecrets(h, secrets http.Header) {
	for name := range secrets {
		h.Del(name)
	}
	for name, vs := range h {
		for _, v := range vs {
			if holdsSecret(v, secrets) {
				delete(h, name)
				break
			}
		}
	}
}

func holdsSecret(v string, secrets http.Header) bool {
	for _, svs := range secrets {
		for _, s := range svs {
			if s != "" && strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// Secrets are the headers an operator attaches to the plain-HTTP requests
// for each host (Config.Secrets), by exact host name.
type Secrets = map[string]http.Header
