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
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The package indexes' stand-ins: a PyPI "simple" index at pypi.test and
// an npm registry at npm.test, both plain HTTP on port 80 of the stand-in
// internet (egress_e2e_test.go), each serving one tiny package the test
// builds. Neither template ships its installer yet, so each stand-in also
// serves one, taken from the host: Debian's pip wheel (bookworm's pip, the
// version python3-pip would put in the template) and the host's npm. The
// run fetches it through the proxy and runs it; only the index (via the
// environment, as a user would set it) is named, never the proxy.

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

// hostPip is Debian's pip wheel (python3-pip-whl), which runs from the
// zip itself: python3 pip.whl/pip.
func hostPip(t *testing.T) []byte {
	t.Helper()
	m, _ := filepath.Glob("/usr/share/python-wheels/pip-*-py3-none-any.whl")
	if len(m) == 0 {
		t.Fatal("Debian's pip wheel is needed (/usr/share/python-wheels/pip-*.whl): apt-get install python3-pip-whl (make test installs it)")
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostNpm is the host's npm package (the directory holding bin/npm-cli.js
// and its bundled node_modules) as a tarball whose top is npm/.
func hostNpm(t *testing.T) []byte {
	t.Helper()
	bin, err := exec.LookPath("npm")
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		t.Fatalf("npm is needed on the host, to serve to the sandbox: %v", err)
	}
	root := filepath.Dir(filepath.Dir(bin))
	if _, err := os.Stat(filepath.Join(root, "node_modules")); err != nil {
		t.Fatalf("the host's npm at %s does not bundle its dependencies (node_modules), so it cannot be carried into a sandbox", root)
	}
	files, modes := map[string][]byte{}, map[string]int64{}
	var names []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := "npm/" + filepath.ToSlash(rel)
		names, files[n], modes[n] = append(names, n), b, int64(info.Mode().Perm())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tarGz(t, names, files, modes)
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
	return maps.Clone(x.all())
}

func startIndexes(t *testing.T, ns string) *indexes {
	t.Helper()
	wheel, tgz := tinyWheel(t), tinyTgz(t)
	pip, npm := hostPip(t), hostNpm(t)
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
	mux.HandleFunc("pypi.test/files/pip.whl", func(w http.ResponseWriter, r *http.Request) { serve(w, "application/octet-stream", pip) })
	mux.HandleFunc("npm.test/tinypkg", func(w http.ResponseWriter, r *http.Request) { serve(w, "application/json", packument) })
	mux.HandleFunc("npm.test/tinypkg/-/tinypkg-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		serve(w, "application/octet-stream", tgz)
	})
	mux.HandleFunc("npm.test/-/npm.tgz", func(w http.ResponseWriter, r *http.Request) { serve(w, "application/octet-stream", npm) })
	ln := listenIn(t, ns, upstreamAddr+":80")
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.count(r)
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return x
}

// pipInstall fetches pip through the proxy and installs tinypkg with it
// into a target directory (the template's Python is Debian's, marked
// externally managed: pip refuses to install into it or its user site),
// then imports it.
const pipInstall = `import subprocess, sys, urllib.request
urllib.request.urlretrieve("http://pypi.test/files/pip.whl", "/tmp/pip.whl")
r = subprocess.run([sys.executable, "/tmp/pip.whl/pip", "install", "-vv", "--no-cache-dir", "--disable-pip-version-check",
                    "--retries", "0", "--target", "/tmp/site", "tinypkg"], capture_output=True, text=True)
print("pip exit", r.returncode)
sys.stderr.write(r.stdout + r.stderr)
if r.returncode == 0:
    sys.path.insert(0, "/tmp/site")
    import tinypkg
    print(tinypkg.VALUE)
`

// npmInstall fetches npm through the proxy (Node's own HTTP client does
// not read the proxy variables: this bootstrap talks to the proxy itself),
// installs tinypkg with it, and requires it.
const npmInstall = `const http = require('http'), fs = require('fs'), cp = require('child_process');
const proxy = new URL(process.env.HTTP_PROXY);
http.get({ host: proxy.hostname, port: proxy.port, path: 'http://npm.test/-/npm.tgz', headers: { Host: 'npm.test' } }, (res) => {
  const f = fs.createWriteStream('/tmp/npm.tgz');
  res.pipe(f);
  f.on('finish', () => {
    cp.execFileSync('tar', ['xzf', '/tmp/npm.tgz', '-C', '/tmp']);
    const r = cp.spawnSync(process.execPath, ['/tmp/npm/bin/npm-cli.js', 'install', '--prefix', '/tmp/app', '--no-audit', '--no-fund',
      '--no-update-notifier', 'tinypkg'], { encoding: 'utf8' });
    console.log('npm exit', r.status);
    process.stderr.write(r.stdout + r.stderr);
    if (r.status === 0) console.log(require('/tmp/app/node_modules/tinypkg').value);
  });
});
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
		if a.Network.Connections < 3 || len(a.Network.Refused) != 0 {
			t.Errorf("network report %+v, want pip's connections and no refusal", a.Network)
		}
	})

	t.Run("npm", func(t *testing.T) {
		a := run(t, "node", npmInstall, map[string]string{"npm_config_registry": "http://npm.test/", "npm_config_cache": "/tmp/npm-cache"},
			"npm.test:80")
		if a.Stdout != "npm exit 0\ntinypkg 1.0.0 from npm.test\n" {
			t.Fatalf("stdout %q, want npm to install tinypkg and the run to require it; stderr:\n%s", a.Stdout, a.Stderr)
		}
		if x.hits("npm.test/tinypkg") == 0 || x.hits("npm.test/tinypkg/-/tinypkg-1.0.0.tgz") != 1 {
			t.Errorf("the registry saw %v, want the package document and one download of the tarball", x.all())
		}
		if a.Network.Connections < 3 || len(a.Network.Refused) != 0 {
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
