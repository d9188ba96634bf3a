package e2bdoor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// E2B's network options, in the core's terms. E2B gives a sandbox the
// internet unless told otherwise; Paddock gives none unless asked, so a
// sandbox created with neither allow_internet_access nor network has no
// network here (docs/door-e2b.md). What the SDK can ask:
//
//   - allow_internet_access: true: everything the server allows.
//   - allow_internet_access: false, or denyOut holding all traffic
//     (0.0.0.0/0): nothing, unless allowOut names hosts (E2B's allowOut
//     wins over denyOut).
//   - allowOut: host names (and *.suffix), each on ports 80 and 443; all
//     traffic (0.0.0.0/0) is the whole allowance. Addresses and ranges are
//     refused: Paddock's proxy decides by name and never dials a raw
//     address.
//   - denyOut: addresses and ranges (E2B takes no names there). Ranges the
//     proxy always refuses (private, loopback, link-local, ...) are
//     accepted, as they change nothing; any other is refused, since a
//     decision by name cannot hold it.
//
// The server's allowance narrows every answer (the core does it), so
// nothing here can reach beyond what the tenant is allowed.

// networkConfig is the create body's network.
type networkConfig struct {
	AllowOut           []string        `json:"allowOut"`
	DenyOut            []string        `json:"denyOut"`
	AllowPublicTraffic *bool           `json:"allowPublicTraffic"`
	EgressProxy        json.RawMessage `json:"egressProxy"`
	HTTPSPorts         json.RawMessage `json:"httpsPorts"`
	MaskRequestHost    *string         `json:"maskRequestHost"`
	Rules              json.RawMessage `json:"rules"`
}

// netAsk is a sandbox's ask kept for its later contexts and the note.
type netAsk struct {
	Allow []string `json:"allow,omitempty"`
	All   bool     `json:"all,omitempty"`
	// AllowOut and DenyOut are as the client sent them, for its reads.
	AllowOut []string `json:"allow_out,omitempty"`
	DenyOut  []string `json:"deny_out,omitempty"`
}

func (a *netAsk) core() *core.NetworkAsk {
	if a == nil {
		return nil
	}
	return &core.NetworkAsk{Allow: append([]string(nil), a.Allow...), All: a.All}
}

const allTraffic4, allTraffic6 = "0.0.0.0/0", "::/0"

// networkAsk maps allow_internet_access and network onto an ask; nil is
// no network.
func networkAsk(internet *bool, raw json.RawMessage) (*netAsk, error) {
	var cfg networkConfig
	if len(raw) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return nil, invalid(fmt.Sprintf("network: %v", err))
		}
	}
	switch {
	case len(cfg.Rules) > 0 && string(cfg.Rules) != "null" && string(cfg.Rules) != "{}":
		return nil, invalid("network.rules: Paddock's operator attaches headers to hosts (--egress-secrets); a sandbox cannot")
	case len(cfg.EgressProxy) > 0 && string(cfg.EgressProxy) != "null":
		return nil, invalid("network.egressProxy: Paddock's own proxy carries every connection; it does not chain to another")
	case cfg.MaskRequestHost != nil:
		return nil, invalid("network.maskRequestHost: Paddock serves no sandbox URLs to mask")
	case len(cfg.HTTPSPorts) > 0 && string(cfg.HTTPSPorts) != "null" && string(cfg.HTTPSPorts) != "[]":
		return nil, invalid("network.httpsPorts: Paddock serves no sandbox ports")
	case cfg.AllowPublicTraffic != nil && !*cfg.AllowPublicTraffic:
		return nil, invalid("network.allowPublicTraffic: false is not served: Paddock serves no sandbox URLs")
	}
	ask := &netAsk{AllowOut: cfg.AllowOut, DenyOut: cfg.DenyOut}
	for _, a := range cfg.AllowOut {
		switch {
		case a == allTraffic4 || a == allTraffic6:
			ask.All = true
		case isAddress(a):
			return nil, invalid(fmt.Sprintf("network.allowOut: %q is an address; Paddock's egress allows host names only (and refuses raw addresses)", a))
		default:
			ask.Allow = append(ask.Allow, a)
		}
	}
	if ask.All {
		ask.Allow = nil
	}
	denyAll := internet != nil && !*internet
	for _, d := range cfg.DenyOut {
		p, err := prefixOf(d)
		if err != nil {
			return nil, invalid(fmt.Sprintf("network.denyOut: %q is not an address or range (E2B takes no names there)", d))
		}
		switch {
		case p.Bits() == 0:
			denyAll = true
		case !core.AlwaysBlocked(p):
			return nil, invalid(fmt.Sprintf("network.denyOut: %q: Paddock decides by host name and cannot deny a public range; name the hosts you allow in allowOut", d))
		}
	}
	switch {
	case ask.All || len(ask.Allow) > 0:
		return ask, nil
	case denyAll:
		return nil, nil
	case internet != nil || len(raw) > 0 && string(raw) != "null":
		// Asked for the internet, or set network without limiting it.
		ask.All = true
		return ask, nil
	}
	return nil, nil
}

func isAddress(s string) bool {
	_, err := prefixOf(s)
	return err == nil
}

// prefixOf reads an address or a CIDR range.
func prefixOf(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// networkInfo is a sandbox's network as its get answer gives it.
type networkInfo struct {
	AllowOut []string `json:"allowOut,omitempty"`
	DenyOut  []string `json:"denyOut,omitempty"`
}

// infoOf is ask's allowInternetAccess and network for the get answer.
func infoOf(ask *netAsk) (bool, *networkInfo) {
	if ask == nil {
		return false, nil
	}
	return true, &networkInfo{AllowOut: ask.AllowOut, DenyOut: ask.DenyOut}
}

// networkUpdate is the body of PUT /sandboxes/{id}/network: the create
// body's network fields, allow_internet_access beside them.
type networkUpdate struct {
	AllowInternetAccess *bool           `json:"allow_internet_access"`
	AllowOut            []string        `json:"allowOut"`
	DenyOut             []string        `json:"denyOut"`
	EgressProxy         json.RawMessage `json:"egressProxy"`
	Rules               json.RawMessage `json:"rules"`
}

// setNetwork replaces a sandbox's egress rules, as E2B's update does:
// every context's session gets the new policy, its proxy deciding later
// connections by it. A sandbox created without a network cannot get one
// (409): its sandboxes have no interface.
func (d *door) setNetwork(c *gin.Context) {
	var req networkUpdate
	if err := d.readJSON(c, &req); err != nil {
		fail(c, err)
		return
	}
	raw, err := json.Marshal(networkConfig{AllowOut: req.AllowOut, DenyOut: req.DenyOut, EgressProxy: req.EgressProxy, Rules: req.Rules})
	if err != nil {
		fail(c, err)
		return
	}
	ask, err := networkAsk(req.AllowInternetAccess, raw)
	if err != nil {
		fail(c, err)
		return
	}
	if ask != nil && !ask.All && len(ask.Allow) == 0 {
		ask = nil // a network object that asks for nothing: as denying all
	}
	sb, _, err := d.owned(c.Request.Context(), callerOf(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	sb.mu.Lock()
	ids := make([]string, 0, len(sb.contexts))
	for _, cc := range sb.contexts {
		ids = append(ids, cc.ID)
	}
	sb.mu.Unlock()
	for _, id := range ids {
		if _, err := d.core.SetSessionNetwork(sb.owner, id, ask.core()); err != nil {
			fail(c, err)
			return
		}
	}
	// A sandbox denied everything reads as without internet access; the
	// contexts it opens from now on have no network.
	sb.mu.Lock()
	sb.network = ask
	sb.mu.Unlock()
	d.keep(sb)
	c.Status(http.StatusNoContent)
}
