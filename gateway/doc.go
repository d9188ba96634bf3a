// Package gateway is the stateless front of a Paddock tier: it forwards
// every door's requests (REST /v1, MCP, E2B, Jupyter and its WebSockets,
// GraphQL, /metrics) to the Paddock nodes behind it, signing each with
// the node credential that a node in --role=node demands (credential.go).
//
// What it routes by: one-shot runs and new sessions go to the node with
// the most ready sandboxes for the template (pick.go), learned by polling
// each node's /readyz (health.go); anything with an id goes to the node
// the id names, as every session id a node makes begins with that node's
// tag (Tag, ids.go). It keeps no session state: two gateways over the
// same nodes answer alike, and one restarted loses nothing.
//
// It imports the standard library and prometheus' text format only:
// nothing of Paddock (no core, pool, kernels or runner), so that a
// gateway cannot hold a sandbox or a session by construction. cmd wires
// the caller authentication it needs as a function (Config.Authenticate).
package gateway
