package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// kernelClient is the host side of an agent in kernel mode. Frames that
// arrive while it waits for something else are kept: acks by ID, Lost in
// order.
type kernelClient struct {
	*client
	lastID uint64
	acks   map[uint64]wire.Ack
	losts  []wire.Lost
	cmds   map[uint64]*cmdResult // commands' output and ends (command_test.go)
}

// startKernel starts an agent for cfg and opens a kernel with env.
func startKernel(t testing.TB, cfg Config, env map[string]string) *kernelClient {
	t.Helper()
	c := startAgent(t, cfg)
	c.hello()
	k := &kernelClient{client: c, acks: map[uint64]wire.Ack{}, cmds: map[uint64]*cmdResult{}}
	id := k.nextID()
	if a := k.call(wire.TypeKernel, id, wire.KernelOpen{ID: id, Env: env}); a.Error != "" {
		t.Fatalf("kernel open: %+v; log:\n%s", a, c.log)
	}
	return k
}

func (k *kernelClient) nextID() uint64 {
	k.lastID++
	return k.lastID
}

func (k *kernelClient) send(typ wire.Type, v any) {
	k.t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		k.t.Fatal(err)
	}
	if err := k.w.Write(typ, raw); err != nil {
		k.t.Fatalf("sending %c: %v", typ, err)
	}
}

// frame returns the next frame, which must be a frame of kernel mode.
func (k *kernelClient) frame() wire.Frame {
	k.t.Helper()
	f, err := k.next()
	if err != nil {
		k.t.Fatalf("reading a frame: %v; log:\n%s", err, k.log)
	}
	return f
}

func (k *kernelClient) decode(f wire.Frame, v any) {
	k.t.Helper()
	if err := json.Unmarshal(f.Payload, v); err != nil {
		k.t.Fatalf("decoding %c %s: %v", f.Type, f.Payload, err)
	}
}

// call sends request v, whose ID is id, and waits for its Ack.
func (k *kernelClient) call(typ wire.Type, id uint64, v any) wire.Ack {
	k.t.Helper()
	k.send(typ, v)
	return k.waitAck(id)
}

// simple sends a Request of type typ (interrupt, restart) and waits for
// its Ack.
func (k *kernelClient) simple(typ wire.Type) wire.Ack {
	k.t.Helper()
	id := k.nextID()
	return k.call(typ, id, wire.Request{ID: id})
}

// waitAck waits for the Ack of request id.
func (k *kernelClient) waitAck(id uint64) wire.Ack {
	k.t.Helper()
	for {
		if a, ok := k.acks[id]; ok {
			delete(k.acks, id)
			return a
		}
		k.stash(k.frame())
	}
}

// stash keeps an Ack, a Lost or a command's frame; anything else is
// unexpected.
func (k *kernelClient) stash(f wire.Frame) {
	k.t.Helper()
	switch f.Type {
	case wire.TypeAck:
		var a wire.Ack
		k.decode(f, &a)
		k.acks[a.ID] = a
	case wire.TypeLost:
		var l wire.Lost
		k.decode(f, &l)
		k.losts = append(k.losts, l)
	case wire.TypeCommandOutput, wire.TypeCommandEnd:
		k.stashCommand(f)
	default:
		k.t.Fatalf("unexpected frame %c %s", f.Type, f.Payload)
	}
}

// waitLost waits for a Lost frame.
func (k *kernelClient) waitLost() wire.Lost {
	k.t.Helper()
	for len(k.losts) == 0 {
		k.stash(k.frame())
	}
	l := k.losts[0]
	k.losts = k.losts[1:]
	return l
}

// cellResult is everything the agent sent for one Execute.
type cellResult struct {
	events         []wire.Event
	stdout, stderr []byte
	done           wire.Done
	first          time.Duration // from sending Execute to the first event, if any
	elapsed        time.Duration // from sending Execute to Done
}

// execute runs one cell to its Done.
func (k *kernelClient) execute(req wire.Execute) cellResult {
	k.t.Helper()
	start := k.startCell(&req)
	return k.collect(req.ID, start)
}

// startCell sends req with a fresh ID, and a minute's timeout, as a safety
// net, unless it has one.
func (k *kernelClient) startCell(req *wire.Execute) time.Time {
	k.t.Helper()
	req.ID = k.nextID()
	if req.TimeoutMS == 0 {
		req.TimeoutMS = 60_000
	}
	start := time.Now()
	k.send(wire.TypeExecute, req)
	return start
}

// collect reads the frames of cell id up to its Done.
func (k *kernelClient) collect(id uint64, start time.Time) cellResult {
	k.t.Helper()
	var res cellResult
	for {
		f := k.frame()
		switch f.Type {
		case wire.TypeEvent:
			var ev wire.Event
			k.decode(f, &ev)
			if ev.ID != id {
				k.t.Fatalf("event %+v during cell %d", ev, id)
			}
			if len(res.events) == 0 {
				res.first = time.Since(start)
			}
			res.events = append(res.events, ev)
		case wire.TypeStdout:
			res.stdout = append(res.stdout, f.Payload...)
		case wire.TypeStderr:
			res.stderr = append(res.stderr, f.Payload...)
		case wire.TypeDone:
			var d wire.Done
			k.decode(f, &d)
			if d.ID != id {
				k.t.Fatalf("done %+v during cell %d", d, id)
			}
			res.done = d
			res.elapsed = time.Since(start)
			return res
		default:
			k.stash(f)
		}
	}
}

// waitStdout reads the stream events of cell id until its standard output
// so far is want. The cell must not end first: a test that then lets the
// cell go on (a file the cell waits for) proves the output came while the
// cell ran, however slow the machine.
func (k *kernelClient) waitStdout(id uint64, want string) {
	k.t.Helper()
	got := ""
	for got != want {
		f := k.frame()
		switch f.Type {
		case wire.TypeEvent:
			var ev wire.Event
			k.decode(f, &ev)
			if ev.ID != id || ev.Type != "stream" || ev.Stream != "stdout" || !strings.HasPrefix(want, got+ev.Text) {
				k.t.Fatalf("event %+v after stdout %q, want the rest of %q", ev, got, want)
			}
			got += ev.Text
		case wire.TypeDone:
			k.t.Fatalf("cell over (%s) after stdout %q, want %q while it runs", f.Payload, got, want)
		default:
			k.stash(f)
		}
	}
}

// text is the cell's stream output on stream.
func (r cellResult) text(stream string) string {
	var b strings.Builder
	for _, ev := range r.events {
		if ev.Type == "stream" && ev.Stream == stream {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// rich returns the events other than stream events.
func (r cellResult) rich() []wire.Event {
	var out []wire.Event
	for _, ev := range r.events {
		if ev.Type != "stream" {
			out = append(out, ev)
		}
	}
	return out
}

// errorEvent returns the cell's error event, or fails.
func (r cellResult) errorEvent(t *testing.T) wire.ExecError {
	t.Helper()
	for _, ev := range r.events {
		if ev.Type == "error" && ev.Error != nil {
			return *ev.Error
		}
	}
	t.Fatalf("no error event in %+v (done %+v)", r.events, r.done)
	return wire.ExecError{}
}

// mustDone fails unless the cell ended with status and reason.
func (r cellResult) mustDone(t *testing.T, status, reason string) {
	t.Helper()
	if r.done.Status != status || r.done.Reason != reason {
		t.Fatalf("done %+v, events %+v, want %s/%s", r.done, r.events, status, reason)
	}
}
