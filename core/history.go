package core

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paddock-dev/paddock/kernels"
)

// Bounds on a session's history.
const (
	maxCells    = 100     // the last cells kept per session
	maxCellCode = 8 << 10 // bytes of a cell's code kept
)

// Cell is one execution in a session's history.
type Cell struct {
	// Count is the cell's execution count (as Jupyter numbers cells).
	Count int
	// Code is the cell's code, at most maxCellCode bytes of it.
	Code string
	// Status is "ok", "error" or "aborted".
	Status string
	// At is when the cell ended.
	At time.Time
}

// history keeps each session's last cells. Sessions that end by expiry
// are forgotten at the next prune, which runs when a session is created
// and when the table holds more sessions than the kernels may.
type history struct {
	mu sync.Mutex
	m  map[string][]Cell
}

func newHistory() *history { return &history{m: map[string][]Cell{}} }

// add records a cell of session id.
func (h *history) add(id string, c Cell, k *kernels.Manager) {
	if len(c.Code) > maxCellCode {
		cut := maxCellCode
		for cut > 0 && !utf8.RuneStart(c.Code[cut]) {
			cut--
		}
		c.Code = c.Code[:cut]
	}
	h.mu.Lock()
	cells := append(h.m[id], c)
	if len(cells) > maxCells {
		cells = append(cells[:0:0], cells[len(cells)-maxCells:]...)
	}
	h.m[id] = cells
	over := len(h.m) > k.Config().MaxSessions
	h.mu.Unlock()
	if over {
		h.prune(k)
	}
}

// cells returns a copy of session id's cells, oldest first; never nil.
func (h *history) cells(id string) []Cell {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Cell{}, h.m[id]...)
}

// drop forgets session id.
func (h *history) drop(id string) {
	h.mu.Lock()
	delete(h.m, id)
	h.mu.Unlock()
}

// prune forgets the sessions the kernels no longer hold.
func (h *history) prune(k *kernels.Manager) {
	live := map[string]bool{}
	for _, info := range k.ListAll() {
		live[info.ID] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.m {
		if !live[id] {
			delete(h.m, id)
		}
	}
}
