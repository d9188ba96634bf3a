package pool

import "errors"

var (
	// ErrUnknownTemplate means no template has the requested name.
	ErrUnknownTemplate = errors.New("unknown template")
	// ErrClosed means the manager is closed or closing.
	ErrClosed = errors.New("pool closed")
	// ErrBusy means a run waited QueueTimeout for a run slot without
	// getting one.
	ErrBusy = errors.New("all run slots busy")
)
