package runner

import "errors"

var (
	// ErrUsed is returned by Run on a sandbox that already ran once.
	ErrUsed = errors.New("sandbox already used")
	// ErrSandboxLost means the sandbox died before it could take the request.
	ErrSandboxLost = errors.New("sandbox lost")
	// ErrBadRequest wraps a request the sandbox refused (bad file path…).
	ErrBadRequest = errors.New("bad run request")
)
