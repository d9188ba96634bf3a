package kernels_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

type ownerKey struct{}

// Sessions wait in the pool's admission queue as their owner's requests:
// tenant b's one session is served between tenant a's two, not after
// them, as it would be if every session were the same anonymous tenant.
func TestSessionsQueueAsTheirOwner(t *testing.T) {
	started := make(chan string)
	release := make(chan struct{})
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(ctx context.Context, spec runner.Spec) (runner.Sandbox, error) {
		owner, _ := ctx.Value(ownerKey{}).(string)
		started <- owner
		<-release
		return rt.NewSandbox(spec), nil
	}
	p, err := pool.New(rt, pool.Config{StartBudget: 1, Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	m, err := kernels.New(p, kernels.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Close(ctx)
		_ = p.Close(ctx)
	})
	var created sync.WaitGroup
	create := func(owner, label string) {
		created.Add(1)
		go func() {
			defer created.Done()
			ctx := context.WithValue(t.Context(), ownerKey{}, label)
			if _, err := m.Create(ctx, owner, kernels.CreateOptions{Template: "python"}); err != nil {
				t.Errorf("Create %s: %v", label, err)
			}
		}()
	}
	waiting := func(n int) {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if st := p.Stats(); len(st) == 1 && st[0].Waiting == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never %d waiting: %+v", n, p.Stats())
			}
		}
	}
	create("x", "x1") // takes the one start slot
	if got := <-started; got != "x1" {
		t.Fatalf("first start %q, want x1", got)
	}
	create("a", "a1")
	waiting(1)
	create("a", "a2")
	waiting(2)
	create("b", "b1")
	waiting(3)
	for _, want := range []string{"a1", "b1", "a2"} {
		release <- struct{}{}
		if got := <-started; got != want {
			t.Fatalf("start %q, want %q (order a1 b1 a2)", got, want)
		}
	}
	release <- struct{}{}
	created.Wait()
}
