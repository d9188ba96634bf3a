package pool

import (
	"math"
	"time"
)

// Adaptive sizing. A template's target of ready sandboxes is
//
//	Size + round(2·λ·R + misses), clamped to [Size, Max]
//
// where λ is its recent take rate (per second, decaying with demandWindow),
// R the time one refill takes (a moving average), so that 2·λ·R covers
// the takes expected while a taken sandbox is replaced twice over, and
// misses the recent acquires that found the pool empty (decaying with
// missWindow), so that each miss buys one more ready sandbox for a while.
// Without demand both terms decay to zero and the target to Size; ready
// sandboxes above the target are destroyed one per tick.
const (
	demandWindow = 20 * time.Second
	missWindow   = 60 * time.Second
	adaptTick    = 2 * time.Second
	// defaultRefill stands in for R until a refill has been timed.
	defaultRefill = 500 * time.Millisecond
)

// demand is a template's recent demand.
type demand struct {
	at     time.Time // when rate and misses were last decayed
	rate   float64   // takes per second
	misses float64
	refill time.Duration
}

func (d *demand) decay(now time.Time) {
	if !d.at.IsZero() {
		dt := now.Sub(d.at).Seconds()
		if dt > 0 {
			d.rate *= math.Exp(-dt / demandWindow.Seconds())
			d.misses *= math.Exp(-dt / missWindow.Seconds())
		}
	}
	d.at = now
}

// take records one acquire; miss says the pool had none ready.
func (d *demand) take(now time.Time, miss bool) {
	d.decay(now)
	d.rate += 1 / demandWindow.Seconds()
	if miss {
		d.misses++
	}
}

// refilled records how long one refill took.
func (d *demand) refilled(took time.Duration) {
	if d.refill == 0 {
		d.refill = took
		return
	}
	d.refill = (7*d.refill + took) / 8
}

// target is the ready count d asks for, between floor and ceiling.
func (d *demand) target(floor, ceiling int) int {
	if ceiling <= floor {
		return floor
	}
	r := d.refill
	if r == 0 {
		r = defaultRefill
	}
	extra := math.Round(2*d.rate*r.Seconds() + d.misses)
	return floor + int(min(extra, float64(ceiling-floor)))
}

// adapt recomputes every template's target on a tick, trims ready
// sandboxes above it, and pokes the fillers (a released sandbox of one
// template may free budget for another).
func (m *Manager) adapt() {
	defer m.fillers.Done()
	t := time.NewTicker(adaptTick)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		for _, tp := range m.order {
			if e := m.retarget(tp); e != nil {
				m.log.Debug("pool above its target; trimming", keyTemplate, tp.tmpl.Name, keySandboxID, e.sb.ID())
				m.destroy(e.sb)
			}
			tp.poke()
		}
	}
}

// retarget updates tp's target and, when more are ready than it, takes
// the oldest ready sandbox out for the caller to destroy.
func (m *Manager) retarget(tp *tpool) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	tp.demand.decay(m.now())
	tp.target = tp.demand.target(tp.tmpl.Size, tp.tmpl.Max)
	if m.closed || len(tp.ready) <= tp.target {
		return nil
	}
	e := tp.ready[0]
	tp.ready[0] = nil
	tp.ready = tp.ready[1:]
	close(e.taken)
	return e
}

// recordTakeLocked notes an acquire of tp and raises its target at once
// when demand asks for more.
func (m *Manager) recordTakeLocked(tp *tpool, miss bool) {
	tp.demand.take(m.now(), miss)
	tp.target = max(tp.target, tp.demand.target(tp.tmpl.Size, tp.tmpl.Max))
}

// budgetAllowsLocked reports whether one more sandbox of tp fits the
// global caps, keeping room for the other templates' floors.
func (m *Manager) budgetAllowsLocked(tp *tpool) bool {
	if m.cfg.MaxSandboxes > 0 && m.live >= m.cfg.MaxSandboxes {
		return false
	}
	if m.cfg.MemoryBudget <= 0 {
		return true
	}
	var used int64
	for _, o := range m.order {
		mem := o.tmpl.Spec.Limits.MemoryBytes
		have := len(o.ready) + o.starting
		used += int64(have+o.inUse-o.custom)*mem + o.customMemory + o.kernelMemoryLocked()
		if o != tp && have < o.tmpl.Size {
			used += int64(o.tmpl.Size-have) * mem // reserved for its floor
		}
	}
	return used+tp.tmpl.Spec.Limits.MemoryBytes <= m.cfg.MemoryBudget
}
