package egress

import "errors"

// Sentinels; every error egress returns wraps one of them.
var (
	// ErrBadRule: a policy rule, or a secret's host, does not parse.
	ErrBadRule = errors.New("bad egress rule")
	// ErrTooManyRules: a list holds more than MaxRules rules.
	ErrTooManyRules = errors.New("too many egress rules")
	// ErrBlockedAddress: the guard refuses an address.
	ErrBlockedAddress = errors.New("blocked address")
	// ErrBadConfig: a proxy's configuration or limits are invalid.
	ErrBadConfig = errors.New("bad egress config")
)
