package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/paddock-dev/paddock/gateway"
)

// The roles of `paddock serve` (docs/scale-out.md).
const (
	roleAll     = "all"     // everything on one machine (the default)
	roleNode    = "node"    // pools, sessions and runs, behind gateways only
	roleGateway = "gateway" // no sandbox, no session: forwards to nodes
)

// roleConfig is the part of config that says which role this process
// plays in a tier.
type roleConfig struct {
	Role     string
	NodeName string
	// NodeCredentialFile holds the secret gateways sign node requests
	// with (at least 32 bytes).
	NodeCredentialFile string
	Nodes              string // --nodes: name=url,... (gateway)

	discoveryConfig // where a gateway's nodes come from (role_discovery.go)

	nodeCred *gateway.Credential // loaded by validateRole
	nodeSet  gateway.Static      // parsed by validateRole
}

func (c *roleConfig) registerRoleFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Role, "role", env("PADDOCK_ROLE", roleAll), "all (pools, sessions and every door on this machine), node (the same, serving only requests a gateway signed) or gateway (no sandboxes: forwards every door to --nodes)")
	fs.StringVar(&c.NodeName, "node-name", env("PADDOCK_NODE_NAME", ""), "this node's name in its tier, a DNS name (a Kubernetes node name will do); every session id it makes begins with the name's tag (required with --role=node)")
	fs.StringVar(&c.NodeCredentialFile, "node-credential-file", env("PADDOCK_NODE_CREDENTIAL_FILE", ""), "file holding the secret (at least 32 bytes) gateways sign their requests to nodes with, the same file on both (required with --role=node and --role=gateway)")
	c.registerDiscoveryFlags(fs.StringVar)
	fs.StringVar(&c.Nodes, "nodes", env("PADDOCK_NODES", ""), "the nodes a gateway forwards to: comma-separated name=url (e.g. n1=http://10.0.0.7:8080)")
}

// validateRole checks the role's flags and loads the credential.
func (c *roleConfig) validateRole() error {
	switch c.Role {
	case roleAll, roleNode, roleGateway:
	default:
		return fmt.Errorf("--role %q: want all, node or gateway", c.Role)
	}
	var errs []error
	if c.NodeName != "" && !gateway.ValidName(c.NodeName) {
		errs = append(errs, fmt.Errorf("--node-name %q: want a DNS name (labels of lower-case letters, digits and '-', joined by dots)", c.NodeName))
	}
	if c.Role == roleNode && c.NodeName == "" {
		errs = append(errs, errors.New("--role=node needs --node-name"))
	}
	if c.Role == roleGateway {
		if err := c.checkDiscovery(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Role != roleAll {
		if c.NodeCredentialFile == "" {
			errs = append(errs, fmt.Errorf("--role=%s needs --node-credential-file", c.Role))
		} else if secret, err := os.ReadFile(c.NodeCredentialFile); err != nil {
			errs = append(errs, fmt.Errorf("--node-credential-file: %w", err))
		} else if c.nodeCred, err = gateway.NewCredential(bytes.TrimRight(secret, "\r\n"), nil); err != nil {
			errs = append(errs, fmt.Errorf("--node-credential-file %s: %w (make one with: head -c 48 /dev/urandom | base64 > %s)",
				c.NodeCredentialFile, err, c.NodeCredentialFile))
		}
	}
	return errors.Join(errs...)
}

// idPrefix is what every session id of this process begins with: its
// node's tag, or nothing without --node-name.
func (c *roleConfig) idPrefix() string {
	if c.NodeName == "" {
		return ""
	}
	return gateway.Tag(c.NodeName)
}

// roleHandler is the handler a node serves: h behind the gateway
// credential; h itself in the other roles.
func (c *roleConfig) roleHandler(h http.Handler) http.Handler {
	if c.Role != roleNode {
		return h
	}
	return gateway.RequireCredential(h, c.nodeCred)
}
