//go:build !linux

package runsc

// closeNetNS does nothing where runsc does not run.
func (rt *Runtime) closeNetNS() error { return nil }
