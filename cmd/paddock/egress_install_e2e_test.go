package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The package indexes' stand-ins: a PyPI "simple" index at pypi.test and
// an npm registry at npm.test, both plain HTTP on port 80 of the stand-in
// internet (egress_e2e_test.go), each serving one tiny package the test
// builds. The runs use the templates' own pip and npm; only the index
// (in the environment, as a user would name one) is set, never the proxy.

// tinyWheel is a pure-Python wheel of tinypkg 1.0: one module and the
// dist-info files pip reads (METADATA, WHEEL, RECORD).
func tinyWheel(t *testing.T) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"tinypkg/__init__.py", "VALUE = 'tinypkg 1.0 from pypi.test'\n"},
		{"tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\nSummary: a test package\n"},
		{"tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: paddock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("tinypkg-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("tinypkg-1.0.dist-info/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarGz is a gzipped tar of files (name to content), in the given order.
func tarGz(t *testing.T, names []string, files map[string][]byte, modes map[string]int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		mode := int64(0o644)
		if m, ok := modes[n]; ok {
			mode = m
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(files[n])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyTgz is the npm tarball of tinypkg 1.0.0.
func tinyTgz(t *testing.T) []byte {
	t.Helper()
	files := map[string][]byte{
		"package/package.json": []byte(`{"name":"tinypkg","version":"1.0.0","main":"index.js"}` + "\n"),
		"package/index.js":     []byte("module.exports.value = 'tinypkg 1.0.0 from npm.test';\n"),
	}
	return tarGz(t, []string{"package/package.json", "package/index.js"}, files, nil)
}

// indexes serves both stand-ins on port 80 of the stand-in internet, and
// counts each host and path asked for.
type indexes struct {
	mu   sync.Mutex
	seen map[string]int
}

func (x *indexes) count(r *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seen[r.Host+r.URL.Path]++
}

func (x *indexes) hits(hostPath string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.seen[hostPath]
}

func (x *indexes) all() map[string]int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return maps.Clone(x.seen)
}

func startIndexes(t *testing.T, ns string) *indexes {
	t.Helper()
	wheel, tgz := tinyWheel(t), tinyTgz(t)
	wheelSum, tgzSHA1, tgzSHA512 := sha256.Sum256(wheel), sha1.Sum(tgz), sha512.Sum512(tgz)
	const wheelName = "tinypkg-1.0-py3-none-any.whl"
	packument, _ := json.Marshal(map[string]any{
		"name": "tinypkg", "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": "tinypkg", "version": "1.0.0", "main": "index.js",
			"dist": map[string]string{"tarball": "http://npm.test/tinypkg/-/tinypkg-1.0.0.tgz",
				"shasum": hex.EncodeToString(tgzSHA1[:]), "integrity": "sha512-" + base64.StdEncoding.EncodeToString(tgzSHA512[:])},
		}},
	})
	x := &indexes{seen: map[string]int{}}
	serve := func(w http.ResponseWriter, typ string, b []byte) {
		w.Header().Set("Content-Type", typ)
		_, _ = w.Write(b)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("pypi.test/simple/tinypkg/", func(w http.ResponseWriter, r *http.Request) {
		serve(w, "text/html", fmt.Appendf(nil, `<!DOCTYPE html><html><body><a href="/files/%s#sha256=%x">%s</a></body></html>`,
			wheelName, wheelSum, wheelName))
	})
	mux.HandleFunc("pypi.test/files/"+wheelName, func(w http.ResponseWriter, r *http.Request) { serve(w, "application/octet-stream", wheel) })
	mux.HandleFunc("npm.test/tinypkg", func(w http.ResponseWriter, r *http.Request) { serve(w, "application/json", packument) })
	mux.HandleFunc("npm.test/tinypkg/-/tinypkg-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		serve(w, "application/octet-stream", tgz)
	})
	ln := listenIn(t, ns, upstreamAddr+":80")
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.count(r)
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return x
}

// pipInstall installs tinypkg with the template's pip, as a user would,
// and imports it in the same run: pip installs into the sandbox user's
// site (the template's pip.conf lets it past Debian's externally-managed
// marker), which Python put on sys.path at start.
const pipInstall = `import subprocess, sys
r = subprocess.run(["pip", "install", "-vv", "--no-cache-dir", "--disable-pip-version-check", "--retries", "0", "tinypkg"],
                   capture_output=True, text=True)
print("pip exit", r.returncode)
sys.stderr.write(r.stdout + r.stderr)
if r.returncode == 0:
    import tinypkg
    print(tinypkg.VALUE)
`

// npmInstall installs tinypkg with the template's npm into the working
// directory and requires it by name.
const npmInstall = `const cp = require('child_process');
const r = cp.spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-update-notifier', 'tinypkg'], { encoding: 'utf8' });
console.log('npm exit', r.status);
process.stderr.write(r.stdout + r.stderr);
if (r.status === 0) console.log(require('tinypkg').value);
`

// TestE2EEgressInstall: pip and npm in networked runs install from the
// package indexes a run is allowed, through the host-side proxy, with no
// proxy setting in user code; an index the server does not allow is
// refused, and the refusal is in pip's output and the answer.
func TestE2EEgressInstall(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip (iproute2) is needed to build the test's network namespaces: make test installs it")
	}
	e := newE2EWith(t, "--egress-allow=pypi.test:80 npm.test:80", "--max-timeout=2m",
		"--egress-hosts=pypi.test="+upstreamAddr+",npm.test="+upstreamAddr+",evil.test="+upstreamAddr)
	x := startIndexes(t, startInternet(t))

	run := func(t *testing.T, lang, code string, env map[string]string, allow ...string) networkAnswer {
		t.Helper()
		body := map[string]any{"language": lang, "code": code, "timeout_ms": 110000, "env": env, "network": map[string]any{"allow": allow}}
		status, raw := e.do(t, "POST", "/v1/run", body, "")
		var a networkAnswer
		if status != http.StatusOK {
			t.Fatalf("HTTP %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &a); err != nil || a.Network == nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		return a
	}

	t.Run("pip", func(t *testing.T) {
		a := run(t, "python", pipInstall, map[string]string{"PIP_INDEX_URL": "http://pypi.test/simple", "PIP_TRUSTED_HOST": "pypi.test"},
			"pypi.test:80")
		if a.Stdout != "pip exit 0\ntinypkg 1.0 from pypi.test\n" {
			t.Fatalf("stdout %q, want pip to install tinypkg and the run to import it; stderr:\n%s", a.Stdout, a.Stderr)
		}
		if x.hits("pypi.test/simple/tinypkg/") == 0 || x.hits("pypi.test/files/tinypkg-1.0-py3-none-any.whl") != 1 {
			t.Errorf("the index saw %v, want the project page and one download of the wheel", x.all())
		}
		if a.Network.Connections < 2 || len(a.Network.Refused) != 0 {
			t.Errorf("network report %+v, want pip's connections and no refusal", a.Network)
		}
	})

	t.Run("npm", func(t *testing.T) {
		a := run(t, "node", npmInstall, map[string]string{"npm_config_registry": "http://npm.test/"},
			"npm.test:80")
		if a.Stdout != "npm exit 0\ntinypkg 1.0.0 from npm.test\n" {
			t.Fatalf("stdout %q, want npm to install tinypkg and the run to require it; stderr:\n%s", a.Stdout, a.Stderr)
		}
		if x.hits("npm.test/tinypkg") == 0 || x.hits("npm.test/tinypkg/-/tinypkg-1.0.0.tgz") != 1 {
			t.Errorf("the registry saw %v, want the package document and one download of the tarball", x.all())
		}
		if a.Network.Connections < 2 || len(a.Network.Refused) != 0 {
			t.Errorf("network report %+v, want npm's connections and no refusal", a.Network)
		}
	})

	t.Run("pip from an index not allowed", func(t *testing.T) {
		a := run(t, "python", pipInstall, map[string]string{"PIP_INDEX_URL": "http://evil.test/simple", "PIP_TRUSTED_HOST": "evil.test"},
			"pypi.test:80")
		if !strings.HasPrefix(a.Stdout, "pip exit 1\n") || strings.Contains(a.Stdout, "tinypkg 1.0") {
			t.Errorf("stdout %q, want pip to fail", a.Stdout)
		}
		if !strings.Contains(a.Stderr, "403 Client Error: Forbidden for url: http://evil.test/simple/tinypkg/") {
			t.Errorf("pip's output does not show the proxy's refusal:\n%s", a.Stderr)
		}
		if a.Network.Refused["not_allowed"] < 1 || x.hits("evil.test/simple/tinypkg/") != 0 {
			t.Errorf("network report %+v, index saw %v; want not_allowed counted and nothing reaching evil.test", a.Network, x.all())
		}
	})
}
