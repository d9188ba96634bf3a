// Command benchmarks measures Paddock against baselines taken in the same
// run, because absolute times on these machines are noisy: a warm one-shot
// through HTTP (pool hit), a cold one-shot (pool size 0) and a native
// unsandboxed interpreter start. It starts real `paddock serve` processes on
// loopback and prints a table of percentiles and ratios.
//
// Run it with `make bench`.
package main
