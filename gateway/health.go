package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// nodeState is what the gateway knows of one node: whether its last
// check answered, its pools' ready sandboxes per template, and the
// requests this gateway has in flight on it.
type nodeState struct {
	Node
	tag      string
	inflight atomic.Int64
	// placed counts the runs and creates sent here since the last check:
	// each has likely taken one of the ready sandboxes that check saw, so
	// that requests between two checks do not all pile onto one node.
	placed atomic.Int64

	mu      sync.Mutex
	up      bool
	checked bool
	ready   map[string]int
}

func (n *nodeState) status() (up, checked bool, ready map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.up, n.checked, n.ready
}

func (n *nodeState) set(up bool, ready map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.up, n.checked = up, true
	if up {
		n.ready = ready
		n.placed.Store(0)
	}
}

// tracker follows the node set and checks each node's /readyz.
type tracker struct {
	src    Source
	client *http.Client
	every  time.Duration

	mu     sync.RWMutex
	byName map[string]*nodeState
	byTag  map[string]*nodeState
	sorted []*nodeState // by name
}

// readyAnswer is the part of a node's /readyz the gateway reads.
type readyAnswer struct {
	// Status is "draining" from a node shutting down: down for the
	// gateway, which sends it nothing more (its sessions come back when
	// it restarts).
	Status    string `json:"status"`
	Templates []struct {
		Name  string `json:"name"`
		Ready int    `json:"ready"`
	} `json:"templates"`
}

// sync takes the source's current set, keeping the state of nodes that
// stay.
func (t *tracker) sync() {
	nodes := t.src.Nodes()
	t.mu.Lock()
	defer t.mu.Unlock()
	byName := make(map[string]*nodeState, len(nodes))
	byTag := make(map[string]*nodeState, len(nodes))
	sorted := make([]*nodeState, 0, len(nodes))
	for _, n := range nodes {
		st := t.byName[n.Name]
		if st == nil || st.URL != n.URL {
			st = &nodeState{Node: n, tag: Tag(n.Name)}
		}
		if _, dup := byTag[st.tag]; dup {
			continue // ParseStatic refuses this; a discovery could not
		}
		byName[n.Name], byTag[st.tag] = st, st
		sorted = append(sorted, st)
	}
	t.byName, t.byTag, t.sorted = byName, byTag, sorted
}

func (t *tracker) nodes() []*nodeState {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.sorted
}

func (t *tracker) byTagOf(tag string) *nodeState {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.byTag[tag]
}

// checkAll checks every node at once and returns when all have answered
// or timed out.
func (t *tracker) checkAll(ctx context.Context) {
	t.sync()
	var wg sync.WaitGroup
	for _, n := range t.nodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			up, ready := t.check(ctx, n)
			n.set(up, ready)
		}()
	}
	wg.Wait()
}

// check asks n's /readyz: any answer means up (503 is a node still
// filling its pools: up, with what it has ready), except a draining one.
func (t *tracker) check(ctx context.Context, n *nodeState) (bool, map[string]int) {
	ctx, cancel := context.WithTimeout(ctx, t.every+time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL+"/readyz", nil)
	if err != nil {
		return false, nil
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	var a readyAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil || a.Status == StatusDraining {
		return false, nil
	}
	ready := make(map[string]int, len(a.Templates))
	for _, tp := range a.Templates {
		ready[tp.Name] = tp.Ready
	}
	return true, ready
}

// run checks every t.every until ctx ends.
func (t *tracker) run(ctx context.Context) {
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.checkAll(ctx)
		}
	}
}
