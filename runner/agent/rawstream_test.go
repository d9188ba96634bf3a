package agent

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// hold forwards everything written before it, and nothing is emitted
// between hold and release.
func TestRawStreamHold(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		got     strings.Builder
		holding bool
	)
	s := newRawStream(wire.TypeStdout, r, func(typ wire.Type, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if holding {
			t.Errorf("emitted %q while held", b)
		}
		got.Write(b)
	})
	done := make(chan struct{})
	go func() {
		s.run([]byte("rest:"))
		close(done)
	}()
	s.hold() // once run has emitted rest, it reads the pipe
	for {
		mu.Lock()
		started := got.String() == "rest:"
		mu.Unlock()
		if started {
			break
		}
		s.release()
		time.Sleep(time.Millisecond)
		s.hold()
	}
	s.release()
	for i := range 50 {
		want := strings.Repeat("x", i) + "|"
		if _, err := w.WriteString(want); err != nil {
			t.Fatal(err)
		}
		s.hold()
		mu.Lock()
		if !strings.HasSuffix(got.String(), want) {
			t.Fatalf("after hold %d: %q", i, got.String())
		}
		holding = true
		mu.Unlock()
		w.WriteString("late")
		mu.Lock()
		holding = false
		mu.Unlock()
		s.release()
	}
	w.Close()
	<-done
	if !strings.HasPrefix(got.String(), "rest:") || strings.Count(got.String(), "late") != 50 {
		t.Errorf("got %q", got.String())
	}
	r.Close()
}
