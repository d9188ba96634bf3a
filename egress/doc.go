// Package egress is network on purpose: the host-side policy, address
// guard and HTTP forward proxy through which a sandbox may reach the
// outside world, and nothing else.
//
// A Policy is none (the default: no network) or an allowlist of rules
// host[:port[,port]] (a DNS name or a *.suffix wildcard), with an
// operator-wide denylist that always wins; Narrow intersects a template's
// policy with a tenant's allowance and a run's request, so that each can
// only take away. A Guard refuses, after resolution, every address that is
// not the public internet: loopback, private, link-local (the metadata
// address), CGNAT, multicast, reserved ranges, their IPv4-mapped, -compatible,
// 6to4 and NAT64 forms, and the host's own addresses. A Proxy serves one
// sandbox: CONNECT host:port and absolute-form plain HTTP, each decided by
// the policy on the name asked for, resolved once, every answer checked by
// the guard and the checked address dialled itself (a second resolution
// could rebind), within the sandbox's connection, byte, rate and time
// limits. For code that ignores the proxy variables, the same proxy
// answers DNS (ServeDNS: an allowed name is the proxy's own address, any
// other NXDOMAIN), origin-form HTTP by its Host header (ServeHost) and
// TLS by the server name of its ClientHello, spliced undecrypted
// (ServeTLS), each through the same decision, guard and limits.
// Every refusal answers a status, a body and the
// X-Paddock-Egress-Refused header naming its reason, is logged and counted;
// a failure of the proxy refuses, never lets through.
//
// egress is a room of its own: it imports the standard library,
// prometheus/client_golang and golang.org/x/net/dns/dnsmessage only, and
// never api, core, doors, kernels, pool, runner or cmd. Whoever wires a
// sandbox's only route to a Proxy (cmd, later) brings the policy; egress
// knows nothing of templates, tenants or runs.
package egress
