package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func engine(t *testing.T, opts Options) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	Mount(opts)(r)
	return r
}

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const wantCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func TestAssets(t *testing.T) {
	h := engine(t, Options{})
	tests := []struct {
		path, contentType, contains string
	}{
		{"/console/", "text/html; charset=utf-8", `<script type="module" src="main.js"></script>`},
		{"/console/index.html", "text/html; charset=utf-8", `<title>Paddock console</title>`},
		{"/console/main.js", "text/javascript; charset=utf-8", "setupPlayground"},
		{"/console/api.js", "text/javascript; charset=utf-8", "Authorization = `Bearer ${token}`"},
		{"/console/render.js", "text/javascript; charset=utf-8", "sandbox: ''"},
		{"/console/app.css", "text/css; charset=utf-8", "iframe.html-output"},
		{"/console/icon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tt.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d", rec.Code)
			}
			hd := rec.Header()
			if got := hd.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if !strings.Contains(rec.Body.String(), tt.contains) {
				t.Errorf("body lacks %q", tt.contains)
			}
			for k, want := range map[string]string{
				"Content-Security-Policy": wantCSP,
				"X-Content-Type-Options":  "nosniff",
				"X-Frame-Options":         "DENY",
				"Referrer-Policy":         "no-referrer",
				"Cache-Control":           "no-cache",
			} {
				if got := hd.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			etag := hd.Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(etag) {
				t.Fatalf("ETag %q", etag)
			}
			// The browser's copy is still good: 304 and no body.
			again := get(t, h, http.MethodGet, tt.path, http.Header{"If-None-Match": {etag}})
			if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
				t.Errorf("revalidation: HTTP %d with %d bytes, want 304 and none", again.Code, again.Body.Len())
			}
		})
	}
}

func TestRedirectHeadAndNotFound(t *testing.T) {
	h := engine(t, Options{})
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		rec := get(t, h, m, "/console", nil)
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/console/" {
			t.Errorf("%s /console: HTTP %d Location %q, want 301 /console/", m, rec.Code, rec.Header().Get("Location"))
		}
	}
	if rec := get(t, h, http.MethodHead, "/console/", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 ||
		rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD /console/: HTTP %d, %d bytes, %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Type"))
	}
	for _, path := range []string{"/console/nope.js", "/console/assets/main.js", "/console/../go.mod", "/console/main.js/x"} {
		rec := get(t, h, http.MethodGet, path, nil)
		var body struct{ Code, Message string }
		if rec.Code != http.StatusNotFound || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Code != "not_found" {
			t.Errorf("GET %s: HTTP %d %s, want 404 not_found", path, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: nosniff missing", path)
		}
	}
}

func TestVersionShown(t *testing.T) {
	rec := get(t, engine(t, Options{Version: `v1.2 "<b>"`}), http.MethodGet, "/console/", nil)
	if want := `<body data-version="v1.2 &#34;&lt;b&gt;&#34;">`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("index lacks %s", want)
	}
	// A browser that kept another version's page does not get a 304.
	other := get(t, engine(t, Options{Version: "v1.3"}), http.MethodGet, "/console/", http.Header{"If-None-Match": {rec.Header().Get("ETag")}})
	if other.Code != http.StatusOK || !strings.Contains(other.Body.String(), `data-version="v1.3"`) {
		t.Errorf("another version's page revalidated: HTTP %d", other.Code)
	}
}

// Every file the page names (its links, scripts and the modules' imports)
// is served, and nothing is fetched from another origin.
func TestAssetsComplete(t *testing.T) {
	h := engine(t, Options{})
	assets, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"|from '\./([^']+)'`)
	external := regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	seen := map[string]bool{}
	for name, a := range assets {
		body := string(a.body)
		for _, m := range refs.FindAllStringSubmatch(body, -1) {
			seen[m[1]+m[2]] = true
		}
		for _, u := range external.FindAllString(body, -1) {
			if u != "http://www.w3.org" { // the SVG namespace, a name, not a fetch
				t.Errorf("%s names %s: the console fetches nothing from elsewhere", name, u)
			}
		}
	}
	if len(seen) < 8 {
		t.Fatalf("found only %v", seen)
	}
	for ref := range seen {
		if rec := get(t, h, http.MethodGet, "/console/"+ref, nil); rec.Code != http.StatusOK {
			t.Errorf("%s is named but answers %d", ref, rec.Code)
		}
	}
	for name := range assets {
		if name != "index.html" && !seen[name] {
			t.Errorf("%s is embedded but nothing names it", name)
		}
	}
}
