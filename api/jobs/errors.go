package jobs

import "errors"

var (
	// ErrInProgress: the key's job is running in this process.
	ErrInProgress = errors.New("job in progress")
	// ErrKeyReused: the key names a job of another request digest.
	ErrKeyReused = errors.New("idempotency key used with another request")
	// ErrFull: no finished job can be evicted to make room.
	ErrFull = errors.New("job store full")
	// ErrNotClaimed: Finish or Forget of a job its caller does not hold.
	ErrNotClaimed = errors.New("job not claimed by the caller")
)
