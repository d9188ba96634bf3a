package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Node is one Paddock node behind the gateway.
type Node struct {
	Name string // a DNS name, unique in the tier
	URL  string // its base URL, e.g. http://10.0.0.7:8080
}

// Source gives the current node set; the gateway asks it on every health
// round, so a source that follows a discovery (Kubernetes EndpointSlices)
// changes the set as it changes.
type Source interface {
	Nodes() []Node
}

// Static is a fixed node set (--nodes).
type Static []Node

// Nodes returns the set.
func (s Static) Nodes() []Node { return s }

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidName reports whether name is a DNS name of RFC 1123 labels (at
// most 253 bytes), as a node's name must be: Kubernetes node names, which
// the nodes take from spec.nodeName, are such names and may hold dots.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if !dnsLabel.MatchString(label) {
			return false
		}
	}
	return true
}

// TagLen is the length of a node's tag in hex digits.
const TagLen = 8

// Tag is the first TagLen hex digits of every session id node name
// makes: the first 32 bits of SHA-256("paddock-node:" + name). Ids keep
// their form (32 hex digits, shown by the Jupyter door as a UUID), which
// no prefix of the name itself would: the Jupyter door's clients parse
// kernel ids as UUIDs.
func Tag(name string) string {
	sum := sha256.Sum256([]byte("paddock-node:" + name))
	return hex.EncodeToString(sum[:TagLen/2])
}

// ParseStatic parses --nodes: comma-separated name=url pairs.
func ParseStatic(s string) (Static, error) {
	var out Static
	tags := map[string]string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		name, raw, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("node %q: want name=url", p)
		}
		n, err := NewNode(name, raw)
		if err != nil {
			return nil, err
		}
		if other, dup := tags[Tag(n.Name)]; dup {
			return nil, fmt.Errorf("nodes %q and %q: the same name or the same tag %s; rename one", other, n.Name, Tag(n.Name))
		}
		tags[Tag(n.Name)] = n.Name
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no nodes")
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// NewNode checks a node's name and URL.
func NewNode(name, raw string) (Node, error) {
	if !ValidName(name) {
		return Node{}, fmt.Errorf("node name %q: want a DNS name (labels of lower-case letters, digits and '-', joined by dots)", name)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return Node{}, fmt.Errorf("node %s: URL %q: want http(s)://host:port", name, raw)
	}
	return Node{Name: name, URL: strings.TrimSuffix(raw, "/")}, nil
}
