package baseline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// A raw restore is the baseline of Paddock's restores: a container of the
// template's spec whose interpreter ran the template's warm-up and then
// waits for one line of code on stdin is checkpointed once; each raw
// restore brings it up with fresh stdio pipes, writes the program, reads
// the first line it prints and deletes the container.

// Image is a checkpointed raw container.
type Image struct {
	dir  string
	argv []string // the checkpointed process, which restores need in their spec
}

// waitingProgram runs warmup, says it is ready, then runs one line read
// from stdin.
func waitingProgram(warmup string) string {
	return warmup + "\nimport sys\nprint('ready', flush=True)\nexec(sys.stdin.readline())\nsys.stdout.flush()\n"
}

// pipes are a container's stdio: the ends the container gets and the
// ends the bench keeps.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
	stderr                           *tail
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return nil, errors.Join(err, p.close())
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		return nil, errors.Join(err, p.close())
	}
	p.stderr = &tail{}
	go func() { _, _ = io.Copy(p.stderr, p.errR) }()
	return &p, nil
}

// handedOver closes the container's ends, which runsc has passed on.
func (p *pipes) handedOver() {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		_ = f.Close()
	}
}

func (p *pipes) close() error {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			_ = f.Close()
		}
	}
	return nil
}

// tail keeps what was written to it, for error messages.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps the first 4 KiB written.
func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf.Len() < 4096 {
		t.buf.Write(b)
	}
	return len(b), nil
}

// String is the last line kept.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return LastLine(t.buf.String())
}

// up runs `runsc run --detach` or `runsc restore --detach` (sub and its
// arguments) for container id with p as its stdio.
func (rt *Runtime) up(ctx context.Context, p *pipes, args ...string) error {
	cmd := rt.Command(ctx, true, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
	err := cmd.Run()
	p.handedOver()
	if err != nil {
		return fmt.Errorf("runsc %s: %w: %s", args[0], err, p.stderr)
	}
	return nil
}

// readLine reads one line from r, giving up when ctx ends.
func readLine(ctx context.Context, r *os.File) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-ctx.Done():
		// Closing r ends the read.
		_ = r.Close()
		return "", ctx.Err()
	}
}

// checkpoint starts argv, waits for it to print "ready" and checkpoints
// it into a new image.
func (rt *Runtime) checkpoint(ctx context.Context, argv []string) (*Image, error) {
	img := &Image{dir: filepath.Join(rt.dir, "images", NewID()), argv: argv}
	if err := os.MkdirAll(img.dir, 0o700); err != nil {
		return nil, err
	}
	id := NewID()
	bundle, err := rt.Bundle(id, argv)
	if err != nil {
		return nil, err
	}
	p, err := newPipes()
	if err != nil {
		return nil, err
	}
	defer p.close()
	err = rt.up(ctx, p, "run", "--detach", "--bundle="+bundle, id)
	if err == nil {
		var line string
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		line, err = readLine(ctx, p.outR)
		cancel()
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("the waiting program printed %q, want ready: %s", line, p.stderr)
		}
	}
	if err == nil {
		err = rt.Command(ctx, false, "checkpoint", "--image-path="+img.dir, id).Run()
		if err != nil {
			err = fmt.Errorf("runsc checkpoint: %w", err)
		}
	}
	if err := errors.Join(err, rt.remove(id)); err != nil {
		return nil, fmt.Errorf("checkpointing a raw %s container: %w", rt.spec.Template, err)
	}
	return img, nil
}

// restore brings a container up from img, has it run code, reads the
// first line of its output and deletes it, all timed.
func (rt *Runtime) restore(ctx context.Context, img *Image, code string) (Result, error) {
	var res Result
	id := NewID()
	begin := time.Now()
	bundle, err := rt.Bundle(id, img.argv)
	if err != nil {
		return res, err
	}
	p, err := newPipes()
	if err != nil {
		return res, errors.Join(err, rt.remove(id))
	}
	defer p.close()
	err = rt.up(ctx, p, "restore", "--detach", "--image-path="+img.dir, "--bundle="+bundle, id)
	if err == nil {
		_, err = io.WriteString(p.inW, strings.TrimSpace(code)+"\n")
	}
	if err == nil {
		// Bounded: a restored program that never prints must not hang the
		// bench; a minute is far beyond any restore seen on a busy VM.
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		res.Stdout, err = readLine(rctx, p.outR)
		cancel()
		if err != nil {
			err = fmt.Errorf("reading the restored program's output: %w: %s", err, p.stderr)
		}
	}
	deleted := time.Now()
	delErr := rt.remove(id)
	res.Total, res.Delete = time.Since(begin), time.Since(deleted)
	return res, errors.Join(err, delErr)
}

// rawRestoreRow times n raw restores running p.
func rawRestoreRow(ctx context.Context, rt *Runtime, img *Image, l langs.Lang, p langs.Probe, n int) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeRawRestore}
	for range n {
		res, err := rt.restore(ctx, img, p.Code)
		if err != nil {
			return r, err
		}
		if !p.OK(res.Stdout) {
			return r, fmt.Errorf("raw restore %s %s: stdout %q", l.Name, p.Name, res.Stdout)
		}
		r.Samples = append(r.Samples, stats.Sample{D: res.Total, Counted: true, Delete: res.Delete})
	}
	return r, nil
}
