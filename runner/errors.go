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

var (
	// ErrKernelLost means the kernel's interpreter or sandbox died; its
	// state is gone and is never silently replaced.
	ErrKernelLost = errors.New("kernel lost")
	// ErrNotFound means a file does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNotSupported means the sandbox lacks an optional ability.
	ErrNotSupported = errors.New("not supported by this sandbox")
)
