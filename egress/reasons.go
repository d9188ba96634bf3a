package egress

// Reasons a connection is refused or cut: the X-Paddock-Egress-Refused
// header's value, the reason label of paddock_egress_refused_total and
// the keys of Stats.Refused.
const (
	ReasonNotAllowed     = "not_allowed"     // no allow rule covers the name and port (always so under none)
	ReasonDenied         = "denied"          // an operator deny rule covers the name and port
	ReasonRawIP          = "raw_ip"          // the request names an IP address, not a DNS name
	ReasonBadHost        = "bad_host"        // the name is not a valid DNS name
	ReasonBadPort        = "bad_port"        // the port is missing, zero or out of range
	ReasonBadRequest     = "bad_request"     // not a proxy request (origin-form, https:// absolute form, upgrade)
	ReasonBlockedAddress = "blocked_address" // the name resolves to an address the guard refuses
	ReasonResolveFailed  = "resolve_failed"  // the name does not resolve
	ReasonConnectFailed  = "connect_failed"  // no checked address accepted the connection
	ReasonConnectTimeout = "connect_timeout" // resolution and connection took longer than Limits.ConnectTimeout
	ReasonUpstreamFailed = "upstream_failed" // the upstream's HTTP answer was broken
	ReasonConnLimit      = "conn_limit"      // Limits.MaxConns connections are already open
	ReasonByteLimit      = "byte_limit"      // Limits.MaxBytesOut or MaxBytesIn is used up
	ReasonIdleTimeout    = "idle_timeout"    // nothing crossed the connection for Limits.IdleTimeout
	ReasonClosed         = "closed"          // the proxy is shutting down
	ReasonSecretHost     = "secret_host"     // a CONNECT to a host the operator attaches secrets to (ask for http://, secrets.go)
	ReasonDNSRefused     = "dns_refused"     // the DNS responder was asked for a name the policy does not allow, or not for an address
	ReasonNoSNI          = "no_sni"          // a TLS connection to the transparent listener named no server (or was not TLS)
)

// Reasons lists every reason, for pre-creating metric labels.
var Reasons = []string{
	ReasonNotAllowed, ReasonDenied, ReasonRawIP, ReasonBadHost, ReasonBadPort,
	ReasonBadRequest, ReasonBlockedAddress, ReasonResolveFailed,
	ReasonConnectFailed, ReasonConnectTimeout, ReasonUpstreamFailed,
	ReasonConnLimit, ReasonByteLimit, ReasonIdleTimeout, ReasonClosed, ReasonSecretHost,
	ReasonDNSRefused, ReasonNoSNI,
}
