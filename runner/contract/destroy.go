package contract

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

func testDestroy(t *testing.T, e Env) {
	sb, err := e.Runtime.Start(t.Context(), e.Specs["python"])
	if err != nil {
		t.Fatal(err)
	}
	if live := e.Live(t); !slices.Contains(live, sb.ID()) {
		t.Fatalf("live sandboxes %v, want %s among them", live, sb.ID())
	}
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if live := e.Live(t); slices.Contains(live, sb.ID()) {
		t.Fatalf("live sandboxes after destroy %v, want %s gone", live, sb.ID())
	}
	select {
	case <-sb.Done():
	default:
		t.Fatal("Done is open after Destroy")
	}
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatalf("a second destroy: %v", err)
	}
	if _, err := sb.Run(t.Context(), runner.RunRequest{Code: "print(1)", Timeout: time.Second}, nil); err == nil {
		t.Fatal("run on a destroyed sandbox succeeded")
	}
}

// testCrash leaves sandboxes behind as a server that died would (never
// destroyed), then has a fresh runtime on the same state clean up.
func testCrash(t *testing.T, e Env) {
	var left []runner.Sandbox
	for _, lang := range []string{"python", "node"} {
		sb, err := e.Runtime.Start(t.Context(), e.Specs[lang])
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, sb)
	}
	n, err := e.Reopen(t).Cleanup(t.Context())
	if err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if n < len(left) {
		t.Errorf("cleanup destroyed %d sandboxes, want at least %d", n, len(left))
	}
	for _, sb := range left {
		if slices.Contains(e.Live(t), sb.ID()) {
			t.Errorf("%s is still live after cleanup", sb.ID())
		}
		// Its agent is dead: the frame channel ends.
		select {
		case <-sb.Done():
		case <-time.After(time.Minute): // a safety net: the channel ends as the container dies
			t.Errorf("%s: its agent's channel is still open after cleanup", sb.ID())
		}
		_ = sb.Destroy(context.Background()) // its resources are gone; only the host ends are closed
	}
}
