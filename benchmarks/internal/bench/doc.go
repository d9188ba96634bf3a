// Package bench holds what every measurement of the benchmarks shares:
// the run's options, parsed from the flags by main, and the small helpers
// every phase calls (a progress line, a sleep that ends with the run).
//
// It imports only the standard library: every other package of the
// benchmarks may import it.
package bench
