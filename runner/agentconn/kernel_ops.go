package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// Execute runs one cell. If ctx ends first, the cell is interrupted and
// Execute still waits for it to end, so that the kernel is idle when it
// returns.
func (k *kernel) Execute(ctx context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
	if k.isLost() {
		return runner.ExecuteResult{}, runner.ErrKernelLost
	}
	id := k.nextID.Add(1)
	cctx, cancelCell := context.WithCancel(ctx)
	defer cancelCell()
	c := &cell{id: id, events: events, done: make(chan wire.Done, 1), input: req.Input, ctx: cctx}
	k.mu.Lock()
	if k.cell != nil {
		k.mu.Unlock()
		return runner.ExecuteResult{}, errors.New("kernel is already executing a cell")
	}
	k.cell = c
	k.mu.Unlock()
	clear := func() {
		k.mu.Lock()
		if k.cell == c {
			k.cell = nil
		}
		k.mu.Unlock()
	}

	payload, err := json.Marshal(wire.Execute{ID: id, Code: req.Code, TimeoutMS: req.Timeout.Milliseconds(), Env: req.Env, MaxOutput: req.MaxOutput, Stdin: req.Input != nil})
	if err != nil {
		clear()
		return runner.ExecuteResult{}, err
	}
	start := time.Now()
	if err := k.s.w.Write(wire.TypeExecute, payload); err != nil {
		clear()
		return runner.ExecuteResult{}, fmt.Errorf("sending cell: %w", runner.ErrKernelLost)
	}
	// The agent interrupts at Timeout and kills after its grace; the host
	// waits a little longer before it gives up on the sandbox.
	deadline := time.NewTimer(req.Timeout + wire.InterruptGraceMS*time.Millisecond + hostGrace)
	defer deadline.Stop()
	ctxDone := ctx.Done()
	for {
		select {
		case d := <-c.done:
			return k.result(d, time.Since(start)), ctx.Err()
		case <-k.lost:
			clear()
			return runner.ExecuteResult{Status: runner.StatusAborted, Reason: k.lossReason(), Exec: time.Since(start), Lost: true}, nil
		case <-deadline.C:
			clear()
			k.markLost("cell outlived its deadline")
			_ = k.s.Destroy(ctx)
			return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonTimeout, Exec: time.Since(start), Lost: true}, nil
		case <-ctxDone:
			ctxDone = nil // interrupt once, then wait for the cell to end
			ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
			_ = k.Interrupt(ictx)
			cancel()
		}
	}
}

func (k *kernel) result(d wire.Done, exec time.Duration) runner.ExecuteResult {
	res := runner.ExecuteResult{
		ExecutionCount: d.ExecutionCount,
		Status:         d.Status,
		Reason:         runner.Reason(d.Reason),
		Exec:           exec,
		Lost:           d.Lost,
	}
	if res.Reason == runner.ReasonKernelLost {
		res.Reason, res.Lost = k.lossReason(), true
	}
	if d.Error != nil {
		res.Error = &runner.ExecError{Name: d.Error.Name, Value: d.Error.Value, Traceback: d.Error.Traceback}
	}
	return res
}

// lossReason tells running out of memory (an OOM kill in the memory cgroup,
// as observed when the loss was seen, or the agent's word that the heap
// ceiling killed the interpreter) from other deaths.
func (k *kernel) lossReason() runner.Reason {
	if k.oom.Load() || k.heapOOM.Load() {
		return runner.ReasonOOM
	}
	return runner.ReasonKernelLost
}

func (k *kernel) Interrupt(ctx context.Context) error {
	id := k.nextID.Add(1)
	_, err := k.request(ctx, wire.TypeInterrupt, id, wire.Request{ID: id}, requestTimeout)
	return err
}

func (k *kernel) Restart(ctx context.Context) error {
	id := k.nextID.Add(1)
	_, err := k.request(ctx, wire.TypeRestart, id, wire.Request{ID: id}, restartTimeout)
	return err
}

func (k *kernel) WriteFile(ctx context.Context, path string, content []byte) error {
	id := k.nextID.Add(1)
	_, err := k.request(ctx, wire.TypeFileWrite, id, wire.FileWrite{ID: id, Path: path, Content: content}, requestTimeout)
	return fileOpErr(err, runner.FileWrite, path)
}

func (k *kernel) ReadFile(ctx context.Context, path string, maxBytes int64) ([]byte, error) {
	id := k.nextID.Add(1)
	a, err := k.request(ctx, wire.TypeFileRead, id, wire.FileRead{ID: id, Path: path, Max: maxBytes}, requestTimeout)
	if err != nil {
		return nil, fileOpErr(err, runner.FileRead, path)
	}
	return a.Content, nil
}

func (k *kernel) ListFiles(ctx context.Context, dir string) ([]runner.FileInfo, error) {
	id := k.nextID.Add(1)
	a, err := k.request(ctx, wire.TypeFileList, id, wire.FileRead{ID: id, Path: dir}, requestTimeout)
	if err != nil {
		return nil, fileOpErr(err, runner.FileList, dir)
	}
	out := make([]runner.FileInfo, len(a.Entries))
	for i, e := range a.Entries {
		out[i] = runner.FileInfo{Name: e.Name, Size: e.Size, IsDir: e.IsDir, Mode: e.Mode, MTime: e.MTime}
	}
	return out, nil
}
