package sessions

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// loadedCells is one client count's loaded condition of the session tail.
type loadedCells struct {
	clients    int
	cells      []time.Duration
	cpu        cpuStat       // the kernel sandbox's cgroup over the cells
	took       time.Duration // how long the cells took
	oneShots   int           // one-shots that ended meanwhile
	refused    int           // 429/503 answers to the clients, warm-up included
	wait       time.Duration // run-queue wait of the kernel sandbox's threads
	serverWait time.Duration // and of the server's
}

// measureLoaded times n cells of exec while clients stream one-shot
// print(1) runs on s. The cells start once every client has finished
// one run, so that the pool is drained and refills run; kernel is the
// session sandbox's cpu cgroup.
func measureLoaded(ctx context.Context, s *server.Server, kernel string, clients, n int, exec func(string) (time.Duration, error)) (r loadedCells, err error) {
	r.clients = clients
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var done, busy atomic.Int64
	var firstRuns sync.WaitGroup
	firstRuns.Add(clients)
	var streamErr error
	var errOnce sync.Once
	for range clients {
		wg.Go(func() {
			first := true
			for lctx.Err() == nil {
				_, _, err := s.RunOnce(lctx, "python", "print(1)")
				var eb load.BusyError
				switch {
				case err == nil:
					done.Add(1)
				case errors.As(err, &eb):
					busy.Add(1)
				case lctx.Err() == nil:
					errOnce.Do(func() { streamErr = err })
				}
				if first {
					first = false
					firstRuns.Done()
				}
			}
		})
	}
	firstRuns.Wait()
	begin, n0 := time.Now(), done.Load()
	err = func() error {
		s0, err := readCPUStat(kernel)
		if err != nil {
			return err
		}
		k0, _ := host.CgroupRunQueue(kernel)
		srv0 := serverRunQueue(s)
		for range n {
			d, err := exec("x + 1")
			if err != nil {
				return err
			}
			r.cells = append(r.cells, d)
		}
		s1, err := readCPUStat(kernel)
		r.cpu = s1.sub(s0)
		k1, _ := host.CgroupRunQueue(kernel)
		r.wait, r.serverWait = k1.Since(k0), serverRunQueue(s).Since(srv0)
		return err
	}()
	r.took, r.oneShots = time.Since(begin), int(done.Load()-n0)
	stop()
	wg.Wait()
	r.refused = int(busy.Load())
	return r, errors.Join(err, streamErr)
}
