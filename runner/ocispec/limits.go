package ocispec

import "github.com/paddock-dev/paddock/runner"

// DefaultLimits apply where a Spec leaves a limit at zero.
var DefaultLimits = runner.Limits{
	MemoryBytes: 512 << 20,
	Processes:   64,
	CPUs:        1,
	DiskBytes:   256 << 20,
	OpenFiles:   1024,
}

// WithDefaults is l with DefaultLimits filled in where it is zero.
func WithDefaults(l runner.Limits) runner.Limits {
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultLimits.MemoryBytes
	}
	if l.Processes <= 0 {
		l.Processes = DefaultLimits.Processes
	}
	if l.CPUs <= 0 {
		l.CPUs = DefaultLimits.CPUs
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = DefaultLimits.DiskBytes
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = DefaultLimits.OpenFiles
	}
	return l
}
