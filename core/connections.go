package core

// HoldConnection counts a long-lived connection a door keeps open for c
// (an MCP session, a kernel WebSocket) against the tenant's
// TenantMaxConnections. At the limit it fails with KindTooMany, code
// too_many_connections and a RetryAfter. The door calls release when the
// connection ends, however it ends; calling it again does nothing.
func (s *Service) HoldConnection(c Caller) (release func(), err error) {
	defer func() { s.metrics.done(c.Door, "hold_connection", err) }()
	return s.tenants.hold(c.Tenant)
}
