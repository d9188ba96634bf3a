package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Page sizes of the list queries.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// cursorPrefix versions the cursor's encoding.
const cursorPrefix = "c1"

// A cursor is the position after a page's last row: its time and id,
// newest first, so that rows written meanwhile neither repeat nor skip a
// row on the pages after. It is opaque to clients.
type cursor struct {
	atMS int64
	id   int64
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d", cursorPrefix, c.atMS, c.id))
}

// parseCursor reads a cursor a page handed out; "" is the first page.
func parseCursor(s string) (c cursor, first bool, err error) {
	if s == "" {
		return c, true, nil
	}
	bad := fmt.Errorf("%w %q: pass the next cursor of an earlier page, as it was, or none", ErrBadCursor, s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, false, bad
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != cursorPrefix {
		return c, false, bad
	}
	if c.atMS, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return c, false, bad
	}
	if c.id, err = strconv.ParseInt(parts[2], 10, 64); err != nil || c.id <= 0 {
		return c, false, bad
	}
	return c, false, nil
}

// pageLimit checks a requested page size: 0 is DefaultPageSize.
func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageSize, nil
	case n < 0 || n > MaxPageSize:
		return 0, fmt.Errorf("%w: limit %d is out of range (1 to %d)", ErrBadFilter, n, MaxPageSize)
	}
	return n, nil
}

// where builds a query's conditions and their numbered arguments.
type where struct {
	conds []string
	args  []any
}

// add appends cond, in which "?" stands for the next argument, with v.
func (w *where) add(cond string, v any) {
	w.args = append(w.args, v)
	w.conds = append(w.conds, strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1))
}

// addIf adds "col = v" unless v is empty.
func (w *where) addIf(col, v string) {
	if v != "" {
		w.add(col+" = ?", v)
	}
}

// addAfter adds the keyset condition of c: rows strictly older than it.
func (w *where) addAfter(c cursor) {
	w.args = append(w.args, c.atMS, c.id)
	n := len(w.args)
	w.conds = append(w.conds, fmt.Sprintf("(at_ms < $%d OR (at_ms = $%d AND id < $%d))", n-1, n-1, n))
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
