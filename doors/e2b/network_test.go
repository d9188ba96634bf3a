package e2bdoor

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestNetworkAsk: E2B's create-time network options map onto the core's
// ask, off unless asked for, and what Paddock cannot hold is refused.
func TestNetworkAsk(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name     string
		internet *bool
		network  string
		want     *netAsk // nil: no network
		err      string
	}{
		{name: "nothing asked"},
		{name: "internet", internet: &yes, want: &netAsk{All: true}},
		{name: "no internet", internet: &no},
		{name: "hosts", network: `{"allowOut":["pypi.org","*.example.com"]}`,
			want: &netAsk{Allow: []string{"pypi.org", "*.example.com"}, AllowOut: []string{"pypi.org", "*.example.com"}}},
		{name: "hosts win over no internet", internet: &no, network: `{"allowOut":["pypi.org"]}`,
			want: &netAsk{Allow: []string{"pypi.org"}, AllowOut: []string{"pypi.org"}}},
		{name: "hosts over deny all", network: `{"allowOut":["pypi.org"],"denyOut":["0.0.0.0/0"]}`,
			want: &netAsk{Allow: []string{"pypi.org"}, AllowOut: []string{"pypi.org"}, DenyOut: []string{"0.0.0.0/0"}}},
		{name: "deny all", network: `{"denyOut":["0.0.0.0/0"]}`},
		{name: "all traffic", network: `{"allowOut":["0.0.0.0/0"]}`, want: &netAsk{All: true, AllowOut: []string{"0.0.0.0/0"}}},
		{name: "deny what is always refused", network: `{"denyOut":["169.254.169.254","10.0.0.0/8"]}`,
			want: &netAsk{All: true, DenyOut: []string{"169.254.169.254", "10.0.0.0/8"}}},
		{name: "deny a public range", network: `{"denyOut":["8.8.8.0/24"]}`, err: "cannot deny a public range"},
		{name: "deny a name", network: `{"denyOut":["evil.com"]}`, err: "not an address or range"},
		{name: "allow an address", network: `{"allowOut":["1.1.1.1"]}`, err: "host names only"},
		{name: "rules", network: `{"rules":{"api.test":[{"transform":{"headers":{"A":"b"}}}]}}`, err: "network.rules"},
		{name: "chained proxy", network: `{"egressProxy":{"address":"p:1080"}}`, err: "egressProxy"},
		{name: "unknown field", network: `{"bogus":1}`, err: "bogus"},
		{name: "public traffic", network: `{"allowPublicTraffic":true}`, want: &netAsk{All: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := networkAsk(tc.internet, json.RawMessage(tc.network))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
