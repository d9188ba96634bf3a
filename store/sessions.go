package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// SessionCatalog keeps the records of one server's open sessions in the
// store's sessions table, under Home (the server's hibernate dir: two
// servers on one PostgreSQL keep apart). Records are opaque JSON
// documents; their owner is pulled out for inspection. It satisfies
// kernels.Catalog.
type SessionCatalog struct {
	Store *Store
	Home  string
}

// Load returns every record kept under Home, by session id.
func (c SessionCatalog) Load(ctx context.Context) (map[string][]byte, error) {
	rows, err := c.Store.db.QueryContext(ctx, rebind(c.Store.cfg.Driver, `SELECT id, record FROM sessions WHERE home = $1`), c.Home)
	if err != nil {
		return nil, fmt.Errorf("reading the session catalog: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, fmt.Errorf("reading the session catalog: %w", err)
		}
		out[id] = []byte(doc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the session catalog: %w", err)
	}
	return out, nil
}

// Save writes id's record, replacing the one before.
func (c SessionCatalog) Save(ctx context.Context, id string, doc []byte) error {
	var head struct {
		Owner string `json:"owner"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return fmt.Errorf("session record %s: %w", id, err)
	}
	_, err := c.Store.db.ExecContext(ctx, rebind(c.Store.cfg.Driver, `INSERT INTO sessions (home, id, owner, record, updated_ms)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (home, id) DO UPDATE SET owner = excluded.owner, record = excluded.record, updated_ms = excluded.updated_ms`),
		c.Home, id, head.Owner, string(doc), c.Store.cfg.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("saving session record %s: %w", id, err)
	}
	return nil
}

// Remove deletes id's record; one that is not there is no error.
func (c SessionCatalog) Remove(ctx context.Context, id string) error {
	if _, err := c.Store.db.ExecContext(ctx, rebind(c.Store.cfg.Driver, `DELETE FROM sessions WHERE home = $1 AND id = $2`), c.Home, id); err != nil {
		return fmt.Errorf("removing session record %s: %w", id, err)
	}
	return nil
}
