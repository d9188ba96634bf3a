package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testSecret = "0123456789abcdef0123456789abcdef-test"

func TestCredential(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	signer, err := NewCredential([]byte(testSecret), func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewCredential([]byte(strings.Repeat("x", 40)), func() time.Time { return at })
	tests := []struct {
		name    string
		sign    func(r *http.Request)
		edit    func(r *http.Request)
		checkAt time.Time
		want    error
		client  string
	}{
		{name: "valid", sign: func(r *http.Request) { signer.Sign(r, "192.0.2.7:5000") }, checkAt: at, client: "192.0.2.7:5000"},
		{name: "no client", sign: func(r *http.Request) { signer.Sign(r, "") }, checkAt: at, client: ""},
		{name: "missing", sign: func(*http.Request) {}, checkAt: at, want: ErrNoCredential},
		{name: "other secret", sign: func(r *http.Request) { other.Sign(r, "") }, checkAt: at, want: ErrBadCredential},
		{name: "expired", sign: func(r *http.Request) { signer.Sign(r, "") }, checkAt: at.Add(31 * time.Second), want: ErrBadCredential},
		{name: "from the future", sign: func(r *http.Request) { signer.Sign(r, "") }, checkAt: at.Add(-31 * time.Second), want: ErrBadCredential},
		{name: "within skew", sign: func(r *http.Request) { signer.Sign(r, "") }, checkAt: at.Add(29 * time.Second)},
		{name: "other path", sign: func(r *http.Request) { signer.Sign(r, "") }, edit: func(r *http.Request) { r.URL.Path = "/v1/admin/sessions" }, checkAt: at, want: ErrBadCredential},
		{name: "other method", sign: func(r *http.Request) { signer.Sign(r, "") }, edit: func(r *http.Request) { r.Method = http.MethodDelete }, checkAt: at, want: ErrBadCredential},
		{name: "other client", sign: func(r *http.Request) { signer.Sign(r, "192.0.2.7:5000") }, edit: func(r *http.Request) {
			r.Header.Set(HeaderCredential, strings.Replace(r.Header.Get(HeaderCredential), "192.0.2.7", "192.0.2.8", 1))
		}, checkAt: at, want: ErrBadCredential},
		{name: "garbage", sign: func(r *http.Request) { r.Header.Set(HeaderCredential, "v1 x y z") }, checkAt: at, want: ErrBadCredential},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/sessions/abc/execute?x=1", nil)
			tt.sign(r)
			if tt.edit != nil {
				tt.edit(r)
			}
			checker, _ := NewCredential([]byte(testSecret), func() time.Time { return tt.checkAt })
			client, err := checker.Verify(r)
			if err != tt.want {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if err == nil && client != tt.client {
				t.Errorf("client = %q, want %q", client, tt.client)
			}
		})
	}
	if _, err := NewCredential([]byte("short"), nil); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
}

func TestRequireCredential(t *testing.T) {
	cred, _ := NewCredential([]byte(testSecret), nil)
	var seen string
	h := RequireCredential(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.RemoteAddr + " " + r.Header.Get(HeaderCredential)
		w.WriteHeader(http.StatusTeapot)
	}), cred)
	tests := []struct {
		name, path string
		signed     bool
		status     int
		seen       string
	}{
		{name: "unsigned run", path: "/v1/run", status: 401},
		{name: "unsigned mcp", path: "/mcp", status: 401},
		{name: "readyz needs none", path: "/readyz", status: 418, seen: "192.0.2.1:1234 "},
		{name: "healthz needs none", path: "/healthz", status: 418, seen: "192.0.2.1:1234 "},
		{name: "signed", path: "/v1/run", signed: true, status: 418, seen: "198.51.100.9:777 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = ""
			r := httptest.NewRequest(http.MethodPost, tt.path, nil)
			if tt.signed {
				cred.Sign(r, "198.51.100.9:777")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status == 401 && !strings.Contains(w.Body.String(), "gateway_credential_required") {
				t.Errorf("body %s names no code", w.Body)
			}
			if seen != tt.seen {
				t.Errorf("handler saw %q, want %q", seen, tt.seen)
			}
		})
	}
}
