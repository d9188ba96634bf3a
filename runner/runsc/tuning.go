package runsc

// Tuning holds the levers that cut the host CPU a sandbox costs. The zero
// value is what Paddock runs with; each field turns one lever off, so that
// the bench can measure it against the same runtime with it on.
type Tuning struct{}
