package runsc

import "github.com/paddock-dev/paddock/runner"

// netImageSuffix ends the name a networked spec's images are filed under
// (runner.Spec.Network), beside the template's images without a network.
// A template keeps both, and an image of one is no outdated image of the
// other: each name's images are pruned apart (pruneSnapshots). Template
// names have no "+", so no template's name is another's networked one.
const netImageSuffix = "+net"

// imageName is the name spec's images are filed under in the snapshot
// directory: its template's (else its language's), networked or not.
func imageName(spec runner.Spec) string {
	name := spec.Template
	if name == "" {
		name = spec.Language
	}
	if spec.Network {
		name += netImageSuffix
	}
	return name
}
