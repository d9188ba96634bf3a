//go:build !linux || !cgo

package runc

// haveBootstrap says the nsenter bootstrap is linked in: not without cgo.
const haveBootstrap = false

// Init does nothing in a binary built without cgo: no container can be
// started from it.
func Init() {}
