// Package steady is the steady-state phase: a closed loop of one-shot
// runs of a `print(i)` stream against a server started with the flags
// `make run` gives it, at several client counts per template, each point
// beside raw `runsc run` + delete of the same interpreter under the same
// limits (and, once per language, of an empty sandbox), with the host
// CPU each run cost (cpu.go says how it is read). Its tables, CSV and
// targets are the report's; its chart is chart's.
//
// It imports baseline, bench, host, langs, load, report and server; it
// must not import chart or the other phases.
package steady
