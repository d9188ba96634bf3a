// Package hibernate is the session hibernation phase: pandas-ready Python
// and Node sessions paused to disk and resumed over REST, timed on an
// idle server and beside a session running a busy loop, against the same
// template's cold session start measured in the same run; the disk each
// image takes; and how many sessions one machine holds, measured live and
// hibernated for a modest count and extrapolated from it.
//
// It imports bench, host, memory, report, server and stats; it must not
// import baseline, chart or the other phases.
package hibernate
