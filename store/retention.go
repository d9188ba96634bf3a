package store

import (
	"context"
	"fmt"
)

// tables are every table retention prunes.
var tables = []string{tableRuns, tableSessionEvents, tableAuthFailures, tableAdminActions}

// pruneIfDue prunes when PruneInterval has passed on the store's clock
// since the last prune.
func (s *Store) pruneIfDue() {
	now := s.cfg.Now()
	if now.Sub(s.w.lastPrune) < s.cfg.PruneInterval {
		return
	}
	s.w.lastPrune = now
	if err := s.prune(s.writeCtx); err != nil {
		s.m.writeErrors.Inc()
		s.logFailure("pruning", err, 0)
	}
}

// prune removes, from every table, the rows older than MaxAge and those
// beyond the newest MaxRows (by id, the order they were written in).
func (s *Store) prune(ctx context.Context) error {
	cutoff := s.cfg.Now().Add(-s.cfg.MaxAge).UnixMilli()
	for _, table := range tables {
		var n int64
		if s.cfg.MaxAge > 0 {
			res, err := s.db.ExecContext(ctx, rebind(s.cfg.Driver, `DELETE FROM `+table+` WHERE at_ms < $1`), cutoff)
			if err != nil {
				return fmt.Errorf("pruning %s by age: %w", table, err)
			}
			k, _ := res.RowsAffected()
			n += k
		}
		if s.cfg.MaxRows > 0 {
			// The id of the newest row beyond MaxRows, and every row up to it.
			res, err := s.db.ExecContext(ctx, rebind(s.cfg.Driver, `DELETE FROM `+table+` WHERE id <= (
				SELECT id FROM `+table+` ORDER BY id DESC LIMIT 1 OFFSET $1)`), s.cfg.MaxRows)
			if err != nil {
				return fmt.Errorf("pruning %s by rows: %w", table, err)
			}
			k, _ := res.RowsAffected()
			n += k
		}
		if n > 0 {
			s.m.pruned.WithLabelValues(table).Add(float64(n))
			s.log.Debug("pruned history", "table", table, "rows", n)
		}
	}
	return nil
}
