// Package gatewaybench is the gateway phase (issue 30): three `paddock
// serve --role=node` processes, each with its own state directory and a
// small python pool, and one `--role=gateway` over them, all on
// loopback, JWTs on as a tier runs. In one run it times a cheap request
// (GET /v1/templates) through the gateway and straight to one node, in
// turns, for the gateway's added latency and its CPU per request; then
// print(1) one-shots at each client count through the gateway over the
// three nodes against that one node alone, windows in turns, for the
// scaling ratio.
//
// The baseline is one of the three nodes reached directly, each request
// signed with the node credential as a gateway signs it (package
// gateway's Credential): the same process, pool and checks as the runs
// through the gateway meet, the other nodes idle beside it, so that what
// differs is the gateway's hop and the spread alone. A fourth server in
// --role=all would hold a pool of its own the whole time and skip the
// credential check the nodes make.
//
// It imports bench, langs, load, report, server and stats, and gateway for the
// credential; it must not import the other phases.
package gatewaybench
