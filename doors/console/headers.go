package console

import "net/http"

// contentSecurityPolicy allows the page its own origin and nothing else:
// scripts, styles and API calls from 'self' only (no inline script or
// style), images from 'self' and the data: URIs a notebook's plots come
// as. HTML outputs are shown in sandboxed srcdoc frames, which inherit
// this policy; no other page may frame the console.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// setHeaders adds what every console answer carries.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// The assets change only with the binary: the browser keeps them but
	// asks each time whether its copy (by ETag) is still the one served.
	h.Set("Cache-Control", "no-cache")
}
