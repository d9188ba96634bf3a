//go:build ignore

// build.sh copies this file, without its build line, into gVisor's
// runsc/boot/filter/config and hooks paddockKeep into PrecompiledPrograms,
// right after its list of option sets is made: the precompiler (see
// precompile.go) sets PaddockKeep, and the option sets whose key lacks
// one of its parts are never compiled (570 of the Sentry's 576, which
// cost about 40 s on 2 cores). How each kept program is built stays
// gVisor's own. runsc itself never calls PrecompiledPrograms, so
// PaddockKeep is empty there.

package config

import "strings"

// PaddockKeep holds the parts every precompiled option set's key must
// contain; empty keeps them all.
var PaddockKeep []string

// paddockKeep returns the option sets of opts whose key holds every part
// of PaddockKeep.
func paddockKeep(opts []Options) []Options {
	if len(PaddockKeep) == 0 {
		return opts
	}
	var kept []Options
	for _, opt := range opts {
		key, all := opt.ConfigKey(), true
		for _, part := range PaddockKeep {
			all = all && strings.Contains(key, part)
		}
		if all {
			kept = append(kept, opt)
		}
	}
	return kept
}
