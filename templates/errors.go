package templates

import "errors"

var (
	// ErrUnknown is returned by Get for a name no template has.
	ErrUnknown = errors.New("unknown template")
	// ErrInvalid wraps every problem Validate finds in a template.
	ErrInvalid = errors.New("invalid template")
)
