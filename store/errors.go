package store

import "errors"

// Sentinels; the errors returned wrap them with detail.
var (
	// ErrSchemaTooNew is Open's refusal of a database whose schema was
	// migrated by a newer Paddock than this one.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
	// ErrBadCursor is a query's refusal of a cursor it did not hand out.
	ErrBadCursor = errors.New("invalid cursor")
	// ErrBadFilter is a query's refusal of a filter out of range.
	ErrBadFilter = errors.New("invalid filter")
	// ErrUnknownDriver is Open's refusal of a Config.Driver it lacks.
	ErrUnknownDriver = errors.New("unknown store driver")
)
