package gateway

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"strings"
)

// candidate is an up node and the ready sandboxes it has for the
// template being placed.
type candidate struct {
	n     *nodeState
	ready int
}

// rank orders the up nodes for a new run or session of template: most
// ready sandboxes for it first (a node that lists no such template
// counts all its ready sandboxes: the request may name a language; less
// those placed there since its last check),
// then fewest requests in flight from this gateway, then by name.
func (t *tracker) rank(template string) []*nodeState {
	var cs []candidate
	for _, n := range t.nodes() {
		up, _, ready := n.status()
		if !up {
			continue
		}
		r, ok := ready[template]
		if !ok {
			for _, v := range ready {
				r += v
			}
		}
		cs = append(cs, candidate{n: n, ready: r - int(n.placed.Load())})
	}
	slices.SortStableFunc(cs, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.ready, a.ready),
			cmp.Compare(a.n.inflight.Load(), b.n.inflight.Load()),
			strings.Compare(a.n.Name, b.n.Name))
	})
	out := make([]*nodeState, len(cs))
	for i, c := range cs {
		out[i] = c.n
	}
	return out
}

// byKey orders the up nodes for an idempotency key by rendezvous hash:
// the same key (of the same tenant) goes to the same node while it is
// up, on every gateway, and to the next in this order when it is not.
func (t *tracker) byKey(tenant, key string) []*nodeState {
	type scored struct {
		n     *nodeState
		score [32]byte
	}
	var ss []scored
	for _, n := range t.nodes() {
		if up, _, _ := n.status(); up {
			ss = append(ss, scored{n, sha256.Sum256([]byte(tenant + "\x00" + key + "\x00" + n.Name))})
		}
	}
	slices.SortFunc(ss, func(a, b scored) int { return -slices.Compare(a.score[:], b.score[:]) })
	out := make([]*nodeState, len(ss))
	for i, s := range ss {
		out[i] = s.n
	}
	return out
}

// anyUp is the first up node by name, for what every node answers alike
// (templates, kernelspecs, the OpenAPI document, the console).
func (t *tracker) anyUp() *nodeState {
	for _, n := range t.nodes() {
		if up, _, _ := n.status(); up {
			return n
		}
	}
	return nil
}
