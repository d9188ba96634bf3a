package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func apiTest(port int) (*fakeResolver, string) {
	return &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}, "api.test:" + strconv.Itoa(port)
}

func TestConnLimit(t *testing.T) {
	port := tcpUpstream(t, echo)
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{MaxConns: 2}})
	first, _, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	if _, _, resp := connect(t, addr, target); resp.StatusCode != 200 {
		t.Fatalf("second: %d", resp.StatusCode)
	}
	_, _, resp = connect(t, addr, target)
	wantRefused(t, resp, readBody(t, resp), 429, ReasonConnLimit)
	// Plain HTTP counts against the same slots.
	resp, body := rawRequest(t, addr, "GET http://"+target+"/ HTTP/1.1\r\nHost: api.test")
	wantRefused(t, resp, body, 429, ReasonConnLimit)

	first.Close()
	waitFor(t, "the first tunnel's slot", func() bool { return len(p.slots) == 1 })
	if _, _, resp := connect(t, addr, target); resp.StatusCode != 200 {
		t.Fatalf("after a close: %d", resp.StatusCode)
	}
	if s := p.Stats(); s.Connections != 3 || s.Refused[ReasonConnLimit] != 2 {
		t.Errorf("Stats = %+v, want 3 connections, 2 conn_limit", s)
	}
}

func TestByteLimitIn(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) {
		_, _ = c.Write(bytes.Repeat([]byte("x"), 100))
		_, _ = io.Copy(io.Discard, c)
	})
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{MaxBytesIn: 10}})
	_, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got, _ := io.ReadAll(br) // ends when the proxy cuts the tunnel
	if len(got) != 10 {
		t.Errorf("client read %d bytes, want 10", len(got))
	}
	waitFor(t, "the cut to be counted", func() bool { return p.Stats().Refused[ReasonByteLimit] == 1 })
	if s := p.Stats(); s.BytesIn != 10 {
		t.Errorf("BytesIn %d, want 10", s.BytesIn)
	}
	_, _, resp = connect(t, addr, target)
	wantRefused(t, resp, readBody(t, resp), 429, ReasonByteLimit)
}

func TestByteLimitOut(t *testing.T) {
	received := make(chan int, 1)
	port := tcpUpstream(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		received <- int(n)
	})
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{MaxBytesOut: 10}})
	c, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := c.Write(bytes.Repeat([]byte("y"), 100)); err != nil {
		t.Fatal(err)
	}
	if n := <-received; n != 10 {
		t.Errorf("upstream received %d bytes, want 10", n)
	}
	if _, err := io.ReadAll(br); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Errorf("client read: %v", err)
	}
	waitFor(t, "the cut to be counted", func() bool { return p.Stats().Refused[ReasonByteLimit] == 1 })
	if s := p.Stats(); s.BytesOut != 10 {
		t.Errorf("BytesOut %d, want 10", s.BytesOut)
	}
}

func TestByteLimitPlainHTTP(t *testing.T) {
	_, port := httpUpstream(t)
	res, target := apiTest(port)
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{MaxBytesIn: 20}})
	resp, body := rawRequest(t, addr, "GET http://"+target+"/ HTTP/1.1\r\nHost: api.test")
	wantRefused(t, resp, body, 429, ReasonByteLimit)
}

// TestRateLimit sends 3000 bytes at 1000 B/s through a proxy on a fake
// clock: past the one-second burst, the bucket waits exactly 2 s.
func TestRateLimit(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) {
		_, _ = c.Write(bytes.Repeat([]byte("z"), 3000))
	})
	res, target := apiTest(port)
	clk := newFakeClock()
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{BytesPerSecond: 1000}},
		func(p *Proxy) { p.setClock(clk) })
	_, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got, _ := io.ReadAll(br)
	if len(got) != 3000 {
		t.Fatalf("read %d bytes, want 3000", len(got))
	}
	if d := clk.total(); d < 2*time.Second-time.Millisecond || d > 2*time.Second+time.Millisecond {
		t.Errorf("waited %v on the rate limit, want 2s", d)
	}
}

func TestConnectTimeout(t *testing.T) {
	hang := func(ctx context.Context, network, address string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	res := &fakeResolver{}
	res.answer = func(resolving context.Context, _ int, host string) ([]netip.Addr, error) {
		if host == "slow.test" {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
		}
		<-resolving.Done() // slowdns.test: the answer never comes in time
		return nil, resolving.Err()
	}
	_, addr, _ := testProxy(t, Config{
		Policy: policyFor(t, 443, "slow.test", "slowdns.test"), Resolver: res, Dial: hang,
		Guard: NewGuard(GuardConfig{HostAddrs: hostIs()}), Limits: Limits{ConnectTimeout: 20 * time.Millisecond},
	})
	_, _, resp := connect(t, addr, "slow.test:443")
	wantRefused(t, resp, readBody(t, resp), 502, ReasonConnectTimeout)

	_, _, resp = connect(t, addr, "slowdns.test:443")
	wantRefused(t, resp, readBody(t, resp), 502, ReasonConnectTimeout)
}

func TestConnectFailed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res})
	_, _, resp := connect(t, addr, target)
	wantRefused(t, resp, readBody(t, resp), 502, ReasonConnectFailed)
	if len(p.slots) != 0 {
		t.Errorf("%d slots held after a failed connect", len(p.slots))
	}
}

func TestIdleTimeout(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // never answers
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{IdleTimeout: 50 * time.Millisecond}})
	_, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got, _ := io.ReadAll(br); len(got) != 0 { // ends when the watchdog cuts it
		t.Errorf("read %q from a silent upstream", got)
	}
	waitFor(t, "the cut to be counted", func() bool { return p.Stats().Refused[ReasonIdleTimeout] == 1 })
	waitFor(t, "the slot back", func() bool { return len(p.slots) == 0 })
}

func TestCloseEndsTunnels(t *testing.T) {
	port := tcpUpstream(t, echo)
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res})
	_, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(br) // returns once Close has closed the tunnel
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("the proxy still accepts after Close")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Limits: Limits{MaxConns: -1}},
		{Limits: Limits{IdleTimeout: -time.Second}},
		{Secrets: map[string]http.Header{"10.0.0.1": {"A": {"b"}}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := New(Config{Limits: Limits{MaxBytesIn: -1}}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("negative bytes: %v, want ErrBadConfig", err)
	}
}

func TestRateLimitOut(t *testing.T) {
	received := make(chan int64, 1)
	port := tcpUpstream(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		received <- n
	})
	res, target := apiTest(port)
	clk := newFakeClock()
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{BytesPerSecond: 1000}},
		func(p *Proxy) { p.setClock(clk) })
	c, _, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := c.Write(bytes.Repeat([]byte("w"), 4500)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n := <-received; n != 4500 {
		t.Fatalf("upstream received %d bytes, want 4500", n)
	}
	if d := clk.total(); d < 3500*time.Millisecond-time.Millisecond || d > 3500*time.Millisecond+time.Millisecond {
		t.Errorf("waited %v on the rate limit, want 3.5s", d)
	}
}

func TestIdleTimeoutPlainHTTP(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // reads, never answers
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{IdleTimeout: 50 * time.Millisecond}})
	resp, body := rawRequest(t, addr, "GET http://"+target+"/ HTTP/1.1\r\nHost: api.test")
	wantRefused(t, resp, body, 502, ReasonIdleTimeout)
	if s := p.Stats(); s.Refused[ReasonIdleTimeout] != 1 {
		t.Errorf("Stats = %+v, want one idle_timeout", s)
	}
}

func TestHeaderBlockBounded(t *testing.T) {
	_, addr, _ := testProxy(t, Config{})
	resp, _ := rawRequest(t, addr, "GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\nX-Big: "+strings.Repeat("a", 70<<10))
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d for a 70 KiB header, want 431", resp.StatusCode)
	}
}

// TestFailureCloses: a resolver that panics ends the client's connection
// without an answer; nothing is let through, and the proxy serves on.
func TestFailureCloses(t *testing.T) {
	port := tcpUpstream(t, echo)
	res := &fakeResolver{answer: func(_ context.Context, _ int, host string) ([]netip.Addr, error) {
		if host == "boom.test" {
			panic("resolver bug")
		}
		return []netip.Addr{loopback}, nil
	}}
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "boom.test", "api.test"), Resolver: res})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "CONNECT boom.test:"+strconv.Itoa(port)+" HTTP/1.1\r\nHost: boom.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(c); len(got) != 0 {
		t.Errorf("a panicking request answered %q", got)
	}
	if _, _, resp := connect(t, addr, "api.test:"+strconv.Itoa(port)); resp.StatusCode != 200 {
		t.Errorf("after the panic: status %d", resp.StatusCode)
	}
}

// TestCloseEndsRateWait: a tunnel waiting on the rate limit ends when
// the proxy closes.
func TestCloseEndsRateWait(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) {
		_, _ = c.Write(bytes.Repeat([]byte("r"), 100))
		_, _ = io.Copy(io.Discard, c)
	})
	res, target := apiTest(port)
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{BytesPerSecond: 1}})
	_, br, resp := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := br.ReadByte(); err != nil { // the burst of one byte; the rest owes 99 s
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(br)
	if len(got) > 99 {
		t.Errorf("read %d more bytes", len(got))
	}
}
