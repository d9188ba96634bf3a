// Package memory measures host memory: the idle pooled sandboxes of a
// server, read from their memory cgroups once its pools are full and
// quiet and grouped by template and by how each sandbox was made
// (restored or cold), and the native RSS of each template's interpreter
// idling after its warm-up outside any sandbox, which the memory target
// of a warmed template is built on.
//
// It imports baseline (the chrooted native runs), bench, host, langs,
// report and server; it must not import chart or the other phases.
package memory
