package pool

import "github.com/paddock-dev/paddock/runner"

// ticket is one request waiting for a sandbox, and for a run slot when
// run is set. It is served once: with a ready sandbox already leased to
// it (sb), or with a start slot (sb nil) it must give back after starting.
type ticket struct {
	tenant string
	tp     *tpool
	custom bool // wants other limits than the template's: never a ready sandbox
	run    bool // also takes one of MaxRuns run slots

	served chan struct{} // closed when served
	sb     runner.Sandbox
}

// fairQueue holds waiting tickets, first in first out within a tenant
// and round robin across tenants, so that one tenant's hundred queued
// runs do not starve another tenant's one. It is guarded by Manager.mu.
type fairQueue struct {
	byTenant map[string][]*ticket
	ring     []string // tenants with a ticket waiting, in arrival order
	next     int      // index in ring of the tenant served next
	n        int
}

func (q *fairQueue) len() int { return q.n }

// waiting counts the tickets for tp.
func (q *fairQueue) waiting(tp *tpool) int {
	n := 0
	for _, ts := range q.byTenant {
		for _, t := range ts {
			if t.tp == tp {
				n++
			}
		}
	}
	return n
}

func (q *fairQueue) push(t *ticket) {
	if q.byTenant == nil {
		q.byTenant = make(map[string][]*ticket)
	}
	if len(q.byTenant[t.tenant]) == 0 {
		q.ring = append(q.ring, t.tenant)
	}
	q.byTenant[t.tenant] = append(q.byTenant[t.tenant], t)
	q.n++
}

// pick removes and returns the next ticket that can be served: starting
// at the tenant whose turn it is, each tenant's oldest ticket that ok
// accepts. The tenant after the one served is next. It is nil when no
// ticket can be served.
func (q *fairQueue) pick(ok func(*ticket) bool) *ticket {
	for i := range q.ring {
		at := (q.next + i) % len(q.ring)
		tenant := q.ring[at]
		for j, t := range q.byTenant[tenant] {
			if ok(t) {
				q.removeAt(at, j)
				return t
			}
		}
	}
	return nil
}

// remove takes t out of the queue; false when it was not in it.
func (q *fairQueue) remove(t *ticket) bool {
	at := -1
	for i, name := range q.ring {
		if name == t.tenant {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	for j, w := range q.byTenant[t.tenant] {
		if w == t {
			q.byTenant[t.tenant] = append(q.byTenant[t.tenant][:j:j], q.byTenant[t.tenant][j+1:]...)
			q.n--
			if len(q.byTenant[t.tenant]) == 0 {
				q.dropTenant(at)
			}
			return true
		}
	}
	return false
}

// removeAt removes ticket j of the tenant at ring index at, and passes
// the turn to the tenant after it.
func (q *fairQueue) removeAt(at, j int) {
	tenant := q.ring[at]
	ts := q.byTenant[tenant]
	q.byTenant[tenant] = append(ts[:j:j], ts[j+1:]...)
	q.n--
	q.next = at + 1
	if len(q.byTenant[tenant]) == 0 {
		q.dropTenant(at)
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
}

func (q *fairQueue) dropTenant(at int) {
	delete(q.byTenant, q.ring[at])
	q.ring = append(q.ring[:at], q.ring[at+1:]...)
	if at < q.next {
		q.next--
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
}
