package egressbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// plan is what one client process fetches, and how.
type plan struct {
	// Addr is where it connects: the stand-in, the proxy, or the direct
	// listener.
	Addr [2]any `json:"addr"`
	// Host is the stand-in's host:port as the request names it.
	Host string `json:"host"`
	// Connect opens a CONNECT tunnel to Host first; Absolute asks for an
	// absolute-form URL (a plain-HTTP proxy request).
	Connect  bool    `json:"connect"`
	Absolute bool    `json:"absolute"`
	Sizes    []int64 `json:"sizes"`
}

// client is a Python program that fetches each of its plan's sizes on a
// connection of its own with a bare socket loop (recv_into one buffer,
// TCP_NODELAY, nothing parsed but the answer's head), so that the client
// costs alike on every path, and prints per fetch a JSON line: the size,
// the seconds to the first byte of the answer and to its last, the body
// bytes read and the status. The same program runs on the host and in a
// sandbox.
const client = `import json, socket, time
P = json.loads(%q)
buf = bytearray(1 << 20)
mv = memoryview(buf)

def head(s, data):
    while b"\r\n\r\n" not in data:
        n = s.recv_into(buf)
        if n == 0:
            raise EOFError("closed within the head")
        data += bytes(mv[:n])
    return data.split(b"\r\n\r\n", 1)

def fetch(size):
    t0 = time.perf_counter()
    s = socket.create_connection((P["addr"][0], P["addr"][1]), 30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    host = P["host"]
    if P["connect"]:
        s.sendall(("CONNECT %%s HTTP/1.1\r\nHost: %%s\r\n\r\n" %% (host, host)).encode())
        h, _ = head(s, b"")
        if not h.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("CONNECT: %%r" %% h[:200])
    target = ("http://" + host if P["absolute"] else "") + "/bytes/%%d" %% size
    s.sendall(("GET %%s HTTP/1.1\r\nHost: %%s\r\n\r\n" %% (target, host)).encode())
    n = s.recv_into(buf)
    t1 = time.perf_counter()
    if n == 0:
        raise EOFError("no answer")
    h, rest = head(s, bytes(mv[:n]))
    status = int(h.split(None, 2)[1])
    length = 0
    for line in h.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    got = len(rest)
    while got < length:
        n = s.recv_into(buf)
        if n == 0:
            break
        got += n
    t2 = time.perf_counter()
    s.close()
    print(json.dumps([size, t1 - t0, t2 - t0, got, status]), flush=True)

for size in P["sizes"]:
    fetch(size)
`

// program is the client program of p.
func program(p plan) string {
	b, _ := json.Marshal(p)
	return fmt.Sprintf(client, string(b))
}

// parseFetches reads the client's lines into fetches of path, the first
// one not counted (it pays the process's first-use costs), and checks
// that each read its whole body with status 200.
func parseFetches(out, path string, round int) ([]report.EgressFetch, error) {
	var fs []report.EgressFetch
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var v [5]float64
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fs, fmt.Errorf("%s: the client printed %q: %w", path, sc.Text(), err)
		}
		size, got, status := int64(v[0]), int64(v[3]), int(v[4])
		if status != 200 || got != size {
			return fs, fmt.Errorf("%s: a %d-byte download answered %d with %d bytes", path, size, status, got)
		}
		fs = append(fs, report.EgressFetch{Path: path, Round: round, Bytes: size, Counted: len(fs) > 0,
			FirstByte: seconds(v[1]), Total: seconds(v[2])})
	}
	return fs, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
