// Command benchmarks measures Paddock against baselines taken in the same
// run, because absolute times on these machines are noisy. It starts real
// `paddock serve` processes on loopback with different pool and snapshot
// settings and measures, for Python and Node:
//
//   - time to first result of a trivial program and of a module import:
//     cold start (no pool, no snapshots), snapshot restore on the request
//     path (no pool, snapshots on), warm pool hit, a raw `runsc run` of the
//     interpreter and a native unsandboxed interpreter;
//   - the session execute round trip of `x + 1`;
//   - sustained one-shot throughput with a fresh sandbox per run, against
//     the raw runsc create/start/delete rate at the same concurrency;
//   - host memory per idle pooled sandbox, read from the sandboxes' memory
//     cgroups.
//
// It prints a table of percentiles and ratios and the headline ratios of
// the targets in docs/architecture.md, and writes the raw samples as JSON and CSV and a PNG
// chart of the p50s.
//
// Run it with `make bench`.
package main
