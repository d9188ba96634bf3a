// Package graphqldoor is Paddock's GraphQL door: a read-only inspection
// API at /v1/graphql over the templates, pools, sessions and the history
// (runs, cells, session events, latency aggregates), described by
// schema.graphql in this directory.
//
// Documents are parsed and validated by gqlparser against that schema and
// kept, valid or not, in a bounded LRU cache keyed by their text, so a
// repeated query is not parsed again (paddock_graphql_documents_total by
// result, hit or miss). Before a document runs, limits.go refuses one
// nested too deep, one with too many fields in a selection, and one whose
// estimated cost (each field weighted by the list sizes above it) is
// over the door's budget, with an error naming the limit. exec.go runs
// what is left: a small executor over the validated document, with
// fragments, @skip/@include, variables, aliases and the spec's null
// propagation; introspect.go answers __schema and __type from the same
// schema.
//
// The door only translates: every field calls the door-neutral core
// (package core), which authenticates, scopes tenants (a tenant sees its
// own sessions and history; another tenant's or all need the admin
// scope), and reads the history store.
//
// graphqldoor may import core, store (value types), internal/edge, gin,
// gqlparser, golang-lru and prometheus; it must not import cmd, api,
// pool or kernels for work, a concrete runtime or rootfs.
package graphqldoor
