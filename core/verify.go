package core

import "time"

// Tenant checks raw as this configuration's token and returns the tenant
// its sub names, or the invalid_token *Error a door would answer. A
// gateway (package gateway, wired by cmd) authenticates callers with it
// before forwarding, as the node behind it will again; it counts no
// failure (the node does, per client address).
func (a Auth) Tenant(raw string) (string, error) {
	v := newVerifier(a, time.Now)
	if v == nil {
		return "", nil
	}
	cl, err := v.verify(raw)
	if err != nil {
		return "", err
	}
	return cl.Subject, nil
}
