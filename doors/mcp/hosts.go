package mcpdoor

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// hosts is the DNS-rebinding check: on a connection to a loopback
// address, only a loopback Host or an allowed one passes. Connections to
// other addresses are not checked (a rebound name reaches only loopback
// from the victim's own browser).
type hosts map[string]bool

func newHosts(allowed []string) hosts {
	h := hosts{}
	for _, a := range allowed {
		h[strings.ToLower(a)] = true
	}
	return h
}

func (g *gate) checkHost(c *gin.Context) {
	local, ok := c.Request.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopback(local.String()) || loopback(c.Request.Host) || g.hosts.allows(c.Request.Host) {
		return
	}
	g.fail(c, &core.Error{Kind: core.KindForbidden, Code: "forbidden_host", Message: fmt.Sprintf(
		"Host %q is refused on a loopback connection (DNS-rebinding protection); a reverse proxy on this machine "+
			"must forward a Host named in --mcp-allowed-hosts (PADDOCK_MCP_ALLOWED_HOSTS)", c.Request.Host)})
}

func (h hosts) allows(host string) bool {
	host = strings.ToLower(host)
	if h[host] {
		return true
	}
	name, _, err := net.SplitHostPort(host)
	return err == nil && h[name]
}

// loopback reports whether a host or host:port names the local machine:
// localhost (or a name under .localhost) or a loopback IP.
func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

func strconvSeconds(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}
