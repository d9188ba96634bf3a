// Command benchmarks measures Paddock against baselines taken in the same
// run, because absolute times on these machines are noisy, and compares
// like with like. It starts real `paddock serve` processes on loopback
// with different pool and snapshot settings (sharing one snapshot
// directory private to the run) and measures, for Python and Node:
//
//   - time to first result of a trivial program and of a module import:
//     cold start (no pool, no snapshots), snapshot restore on the request
//     path (no pool, snapshots on), warm runs from a full idle pool, warm
//     runs back to back at a steady rate from a pool held at its floor,
//     raw runsc and native baselines;
//   - the session execute round trip of `x + 1`, once every pool is full
//     and nothing starts (the target is for an idle machine);
//   - sustained one-shot throughput with a fresh sandbox per run, on a
//     server whose pools keep the sizes and adaptive sizing they ship
//     with, against the raw runsc rate of the same kind of start;
//   - the steady state (steady.go): a closed loop of one-shot runs of a
//     `print(i)` stream at 1, 2, 4, 8 and 16 clients per template, 60 s a
//     point, on a server started with the flags `make run` gives it, each
//     point beside raw `runsc run` + delete of the same interpreter under
//     the same limits, with runs/s, p50, p99, busy answers, errors and the
//     host CPU per run (steadycpu.go says how it is read), and once per
//     language an empty sandbox (/bin/true) at the highest client count,
//     the ceiling of one sandbox per run; it supersedes
//     the two-client throughput above when on (--steady);
//   - host memory per idle pooled sandbox, read from the sandboxes'
//     memory cgroups (v1 or v2, whichever the host has), grouped by how
//     each sandbox was made (its runsc state says whether it was
//     restored).
//   - python-slim beside python (slim.go, --slim): warm and restored
//     print(1) alternating between the two templates on one server, their
//     idle memory by template and their snapshot sizes.
//   - with --cpu-phases, the host CPU of a pooled one-shot split by step
//     (restore or start, first ping, run, destroy), read from the
//     kernel, beside raw runsc run + delete (cpuphases.go,
//     docs/cpu-per-run.md).
//   - the history store's cost (history.go, --history): warm print(1)
//     and a closed loop of one-shots on two python servers, the history
//     database on and off, alternating, with each server's store
//     counters (written, dropped).
//   - network on purpose (internal/egressbench, --egress, --egress-only):
//     a download from a stand-in internet in a network namespace of the
//     bench's own, by one Python client from the host and from inside
//     networked sandboxes, through the egress proxy (CONNECT and plain
//     HTTP) and straight to a listener in the egress namespace, as
//     throughput and first-byte ratios against the host; and the start
//     of a networked one-shot against the same run without a network.
//
// The baselines: the native rows run the template's own interpreter and
// libraries, chrooted into a read-only view of its built root filesystem
// in a private mount namespace (chroot.go); the host's interpreter at the
// same path is a second row, skipped with a note when the host lacks it.
// The raw runsc rows run the interpreter in a container of the spec
// Paddock renders for the template (runner/runsc's OCISpec: the same
// memory, CPU and pids limits, mounts and overlay), `runsc delete`
// included in their time and rate; for snapshotted templates a raw
// restore brings back a checkpoint of the interpreter after the
// template's warm-up.
//
// It prints a table of medians, maxima (p99 from 100 samples on) and
// ratios, and the headline ratios of the targets in docs/architecture.md, and writes the
// raw samples as JSON and CSV and a PNG chart of the medians.
//
// Run it with `make bench`.
package main
