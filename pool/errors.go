package pool

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrUnknownTemplate means no template has the requested name.
	ErrUnknownTemplate = errors.New("unknown template")
	// ErrClosed means the manager is closed or closing.
	ErrClosed = errors.New("pool closed")
	// ErrSaturated means a request waited QueueDeadline for a sandbox (or
	// a run slot) without getting one. The error is a *SaturatedError.
	ErrSaturated = errors.New("no sandbox within the queue deadline")
	// ErrUnavailable means the template has no root filesystem yet, or
	// will not have one (Template.Deferred). The error is an
	// *UnavailableError.
	ErrUnavailable = errors.New("template not available")
)

// SaturatedError is ErrSaturated with the delay after which a retry is
// likely to be served.
type SaturatedError struct {
	Template string
	Waited   time.Duration
	// RetryAfter is how long the requests waiting now take to be served
	// at the rate requests were served recently (1 s to 1 min).
	RetryAfter time.Duration
}

func (e *SaturatedError) Error() string {
	return fmt.Sprintf("waited %s for a %s sandbox: %v", e.Waited.Round(time.Millisecond), e.Template, ErrSaturated)
}

// Is makes errors.Is(err, ErrSaturated) true.
func (e *SaturatedError) Is(target error) bool { return target == ErrSaturated }
