package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// secretHost is the stand-in of an API the operator holds a key for:
// secret.test, HTTPS on the stand-in internet's port 8443, with a
// certificate of the test's own root. The key is new for each test.
type secretHost struct {
	key   string // the Authorization value the operator attaches
	cert  tls.Certificate
	flags []string // --egress-secrets and --egress-secrets-ca

	mu   sync.Mutex
	seen []string // the Authorization headers it was sent
}

const secretHostName = "secret.test"

func newSecretHost(t *testing.T) *secretHost {
	t.Helper()
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	h := &secretHost{key: "Bearer pdsecret-" + hex.EncodeToString(raw)}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: secretHostName},
		DNSNames: []string{secretHostName}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	h.cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
	dir := t.TempDir()
	ca, secrets := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "secrets.json")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]map[string]string{secretHostName: {"Authorization": h.key}})
	if err := os.WriteFile(secrets, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h.flags = []string{"--egress-secrets=" + secrets, "--egress-secrets-ca=" + ca}
	return h
}

// serve answers HTTPS at upstreamAddr:8443 in namespace ns: it records
// the Authorization header and echoes it in a header, never the body.
func (h *secretHost) serve(t *testing.T, ns string) {
	t.Helper()
	ln := tls.NewListener(listenIn(t, ns, upstreamAddr+":8443"), &tls.Config{Certificates: []tls.Certificate{h.cert}})
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		h.mu.Lock()
		h.seen = append(h.seen, got)
		h.mu.Unlock()
		w.Header().Set("X-Echo", "you sent "+got)
		if got == h.key {
			fmt.Fprint(w, "the key is right")
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, "no key")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

func (h *secretHost) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// secretSearch asks secret.test over http:// (the proxy speaks TLS to
// it) and over a CONNECT tunnel (refused), then searches the sandbox
// for anything shaped like the key, in its environment, every process's
// environ and cmdline, and every file: it plants a decoy of the same
// shape first, so that a search that finds nothing is seen to work.
const secretSearch = `import os, re, hashlib, urllib.request
r = urllib.request.urlopen("http://secret.test:8443/v1/key", timeout=10)
print("status", r.status, r.read().decode())
print("headers", sorted(k.lower() for k in r.headers.keys()))
try:
    urllib.request.urlopen("https://secret.test:8443/v1/key", timeout=10); print("TUNNEL OPEN")
except Exception as e:
    print("tunnel refused" if "403" in str(e) else "tunnel failed " + repr(e))
open("/tmp/decoy", "w").write("pdsecret-" + "0" * 32)
pat = re.compile(rb"pdsecret-[0-9a-f]{32}")
hits = set()
def scan(where, data):
    for m in pat.finditer(data):
        hits.add((where, hashlib.sha256(m.group()).hexdigest()[:16]))
scan("environ", "\n".join(k + "=" + v for k, v in os.environ.items()).encode())
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for f in ("environ", "cmdline"):
            try: scan("/proc/" + f, open("/proc/" + pid + "/" + f, "rb").read())
            except OSError: pass
n = 0
for root, dirs, files in os.walk("/"):
    if root == "/": dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
    for f in files:
        p = os.path.join(root, f)
        try:
            if os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > 8 << 20: continue
            scan(p, open(p, "rb").read()); n += 1
        except OSError: pass
print("scanned over 1000 files", n > 1000)
for h in sorted(hits): print("hit", h[0], h[1])
`

// testEgressSecrets: the stand-in sees the operator's key; the sandbox
// sees neither it in the answer nor anywhere of its own.
func testEgressSecrets(t *testing.T, h *secretHost, run func(*testing.T, string, any) (int, networkAnswer, string)) {
	status, a, raw := run(t, secretSearch, map[string]any{"allow": []string{secretHostName + ":8443"}})
	if status != http.StatusOK || a.Network == nil {
		t.Fatalf("HTTP %d %s", status, raw)
	}
	if got := h.sent(); !slices.Equal(got, []string{h.key}) {
		t.Errorf("the secret host was sent Authorization %q, want the operator's key once", got)
	}
	decoy := sha256.Sum256([]byte("pdsecret-" + strings.Repeat("0", 32)))
	want := strings.Join([]string{"status 200 the key is right", "headers ['connection', 'content-length', 'content-type', 'date']", "tunnel refused",
		"scanned over 1000 files True", "hit /tmp/decoy " + hex.EncodeToString(decoy[:8])}, "\n") + "\n"
	if a.Stdout != want {
		t.Errorf("stdout %q (stderr %q), want %q", a.Stdout, a.Stderr, want)
	}
	if strings.Contains(raw, strings.TrimPrefix(h.key, "Bearer ")) {
		t.Errorf("the answer holds the secret: %s", raw)
	}
	if a.Network.Refused["secret_host"] != 1 || a.Network.Connections != 1 {
		t.Errorf("network report %+v, want one connection and the tunnel refused secret_host", a.Network)
	}
}
