package pool

import (
	"sync"
	"testing"
	"time"
)

// While a cell runs, starts are capped at BusyStartBudget; a ready
// sandbox would still be leased, and the cap lifts when the cell ends.
func TestCellsCapStarts(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("node", 0)}, StartBudget: 3, BusyStartBudget: 1, QueueDeadline: time.Hour})
	if got := m.StartBudget(); got != 3 {
		t.Fatalf("StartBudget with no cell = %d, want 3", got)
	}

	end := m.CellBegin("")
	if got := m.StartBudget(); got != 1 {
		t.Fatalf("StartBudget while a cell runs = %d, want 1", got)
	}
	acquireAsync(t, m, "node", "a", "r1")
	if got := g.next(t); got != "r1" {
		t.Fatalf("first start = %q, want r1", got)
	}
	acquireAsync(t, m, "node", "b", "r2")
	until(t, m, "r2 queued behind the cap", func() bool { return m.queue.len() == 1 && m.starts == 1 })

	end()
	end() // a second call changes nothing
	if got := g.next(t); got != "r2" {
		t.Fatalf("start after the cell = %q, want r2", got)
	}
	m.mu.Lock()
	cells := m.cells
	m.mu.Unlock()
	if cells != 0 {
		t.Fatalf("cells = %d after one cell ended (twice), want 0", cells)
	}
	if got := m.StartBudget(); got != 3 {
		t.Fatalf("StartBudget after the cell = %d, want 3", got)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
}

// The cap outlasts the last cell by BusyHold, then lifts and lets a
// waiting start go.
func TestCellHoldOutlastsTheCell(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("node", 0)}, StartBudget: 2, BusyStartBudget: 1,
		BusyHold: 20 * time.Millisecond, QueueDeadline: time.Hour})

	end := m.CellBegin("")
	acquireAsync(t, m, "node", "a", "r1")
	if got := g.next(t); got != "r1" {
		t.Fatalf("first start = %q, want r1", got)
	}
	acquireAsync(t, m, "node", "b", "r2")
	until(t, m, "r2 queued behind the cap", func() bool { return m.queue.len() == 1 })
	end()
	if got := m.StartBudget(); got != 1 {
		t.Fatalf("StartBudget right after the cell = %d, want 1 (held)", got)
	}
	if got := g.next(t); got != "r2" { // served when the hold's timer fires
		t.Fatalf("start after the hold = %q, want r2", got)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
}

// Only the latest hold lifts the cap, and none while a cell runs.
func TestOnlyTheLatestHoldLifts(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("node", 0)}, StartBudget: 2, BusyStartBudget: 1, BusyHold: time.Hour})

	m.CellBegin("")() // hold 1
	end := m.CellBegin("")
	m.holdEnded(1) // its timer fires while a cell runs
	if got := m.StartBudget(); got != 1 {
		t.Fatalf("StartBudget with a cell running after an old hold ended = %d, want 1", got)
	}
	end() // hold 2
	m.holdEnded(1)
	if got := m.StartBudget(); got != 1 {
		t.Fatalf("StartBudget after a stale hold ended = %d, want 1", got)
	}
	m.holdEnded(2)
	if got := m.StartBudget(); got != 2 {
		t.Fatalf("StartBudget after the latest hold ended = %d, want 2", got)
	}
}

// A cell that outlasts BusyCellMax stops capping starts while it runs on.
func TestLongCellStopsCapping(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("node", 0)}, StartBudget: 2, BusyStartBudget: 1,
		BusyCellMax: 20 * time.Millisecond, QueueDeadline: time.Hour})

	end := m.CellBegin("")
	defer end()
	acquireAsync(t, m, "node", "a", "r1")
	if got := g.next(t); got != "r1" {
		t.Fatalf("first start = %q, want r1", got)
	}
	acquireAsync(t, m, "node", "b", "r2")
	if got := g.next(t); got != "r2" { // once the cell has run BusyCellMax
		t.Fatalf("second start = %q, want r2", got)
	}
	m.mu.Lock()
	cells := m.cells
	m.mu.Unlock()
	if cells != 0 {
		t.Fatalf("cells = %d with only a long cell running, want 0", cells)
	}
	end() // ending it later counts it out no second time
	m.mu.Lock()
	cells = m.cells
	m.mu.Unlock()
	if cells != 0 {
		t.Fatalf("cells = %d after the long cell ended, want 0", cells)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
}

func TestBusyConfigRejectsNegatives(t *testing.T) {
	for _, c := range []Config{{BusyStartBudget: -1}, {BusyHold: -time.Second}, {BusyCellMax: -time.Second}} {
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("withDefaults(%+v) accepted a negative", c)
		}
	}
}

// A session sending short cells back to back stops capping starts once
// it has computed for BusyCellMax in a row, and counts again after a
// pause longer than BusyHold; another session counts on its own. The
// clock is a fake one, moved by hand.
func TestBackToBackCellsStopCapping(t *testing.T) {
	g := newGatedStarts()
	m := newGatedManager(t, g, Config{Templates: []Template{warmTmpl("node", 0)}, StartBudget: 2, BusyStartBudget: 1,
		BusyCellMax: time.Hour, BusyHold: time.Minute, QueueDeadline: time.Hour})
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	m.mu.Lock()
	m.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m.mu.Unlock()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	cellsNow := func() int { m.mu.Lock(); defer m.mu.Unlock(); return m.cells }

	// Cells of half an hour each, 30 s apart: the third begins an hour in.
	for i, want := range []int{1, 1, 0} {
		end := m.CellBegin("busy")
		if got := cellsNow(); got != want {
			t.Fatalf("cell %d of the streak: %d counted, want %d", i+1, got, want)
		}
		advance(30 * time.Minute)
		end()
		advance(30 * time.Second)
	}
	if got := m.StartBudget(); got != 1 {
		t.Fatalf("StartBudget in the hold after the counted cells = %d, want 1", got)
	}
	other := m.CellBegin("other")
	if got := cellsNow(); got != 1 {
		t.Errorf("another session's cell: %d counted, want 1", got)
	}
	other()
	advance(2 * time.Minute) // a pause longer than BusyHold
	end := m.CellBegin("busy")
	if got := cellsNow(); got != 1 {
		t.Errorf("after a pause the session's cell: %d counted, want 1", got)
	}
	end()
}
