// Package discovery finds the Paddock nodes a gateway forwards to, and
// tells when that set changes. Three sources: Kubernetes (the
// EndpointSlices of the node Service, watched with a client-go informer),
// a static list, and DNS SRV records resolved again at an interval.
//
// It knows nothing of what a node serves: it imports the standard library
// and client-go (for the Kubernetes source) only, and nothing of Paddock.
// cmd wires a Source into the gateway.
package discovery
