// Package contract is the runner contract as tests: one table of cases
// (runs, limits and their reasons, kernels, files, destroy, cleanup after
// a crash) that every runtime must pass on real sandboxes. Each runtime's
// own test package builds an Env for itself and calls Test; the cases
// never know which runtime they run on.
//
// contract imports runner only (and testing): it is test support, used
// by the tests of runner/runsc and runner/runc.
package contract
