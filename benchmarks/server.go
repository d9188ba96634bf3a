package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// server is a `paddock serve` child process on a free loopback port.
type server struct {
	cmd   *exec.Cmd
	base  string
	state string
	http  *http.Client

	exited  chan struct{} // closed when the process has exited
	waitErr error
}

func startServer(ctx context.Context, o options, poolSize int) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp("", "paddock-bench-")
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, o.paddock, "serve", "--listen="+addr, "--runsc="+o.runsc, "--agent="+o.agent,
		"--cache-dir="+o.cache, "--state-dir="+state, "--build-rootfs=false", "--pool-size="+strconv.Itoa(poolSize), "--log-level=warn", "--tenant-rate=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, state: state, exited: make(chan struct{}),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("paddock serve exited: %v", s.waitErr)
		default:
		}
		resp, err := s.http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, errors.Join(errors.New("server did not become ready in 2 minutes"), s.stop())
}

func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
	_ = os.RemoveAll(s.state)
	return s.waitErr
}

type runResponse struct {
	Stdout string `json:"stdout"`
	Reason string `json:"reason"`
	Warm   bool   `json:"warm"`
}

// sample times n runs of l.code. With wantWarm, it waits before each run
// until the pool has a ready sandbox, and only counts pool hits: the
// number is the latency of a warm run, not of refilling.
func (s *server) sample(ctx context.Context, l lang, n int, wantWarm bool) ([]time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"language": l.name, "code": l.code})
	var out []time.Duration
	for len(out) < n {
		if wantWarm {
			if err := s.awaitReady(ctx, l.name); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		resp, err := s.http.Post(s.base+"/v1/run", "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		if err != nil {
			return nil, err
		}
		var r runResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil || r.Reason != "ok" || r.Stdout != "1\n" {
			return nil, fmt.Errorf("%s run: HTTP %d: %s", l.name, resp.StatusCode, b)
		}
		if r.Warm == wantWarm {
			out = append(out, el)
		}
	}
	return out, nil
}

// awaitReady polls the template listing until the pool is full again, so
// that no refill competes with the measured run for the two CPUs.
func (s *server) awaitReady(ctx context.Context, name string) error {
	for {
		resp, err := s.http.Get(s.base + "/v1/templates")
		if err != nil {
			return err
		}
		var list struct {
			Templates []struct {
				Name string `json:"name"`
				Pool struct {
					Ready  int `json:"ready"`
					Target int `json:"target"`
				} `json:"pool"`
			} `json:"templates"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return err
		}
		for _, t := range list.Templates {
			if t.Name == name && t.Pool.Ready > 0 && t.Pool.Ready >= t.Pool.Target {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
