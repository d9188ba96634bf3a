package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
)

// optionalString is a flag that knows whether it was given.
type optionalString struct {
	v   string
	set bool
}

func (o *optionalString) String() string { return o.v }
func (o *optionalString) Set(s string) error {
	o.v, o.set = s, true
	return nil
}

// tokenScopes are the scopes `paddock token` may grant.
var tokenScopes = []string{"run", "sessions", "admin"}

// tokenCmd mints a JWT for local use and prints it:
// paddock token --subject alice --scopes run,sessions --ttl 1h
// [--jwt-hs256-secret-file F | --private-key PEM].
func tokenCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("paddock token", flag.ContinueOnError)
	subject := fs.String("subject", "", "the tenant the token acts for (its sub claim); required")
	scopes := fs.String("scopes", "run,sessions", "comma-separated scopes to grant: run, sessions")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	secretFile := fs.String("jwt-hs256-secret-file", env("PADDOCK_JWT_SECRET_FILE", ""), "sign HS256 with the shared secret in this file")
	privateKey := fs.String("private-key", env("PADDOCK_JWT_PRIVATE_KEY", ""), "sign with this PEM private key: Ed25519 (EdDSA) or RSA (RS256)")
	audience := fs.String("jwt-audience", env("PADDOCK_JWT_AUDIENCE", ""), "aud claim (the server's --jwt-audience)")
	issuer := fs.String("jwt-issuer", env("PADDOCK_JWT_ISSUER", ""), "iss claim (the server's --jwt-issuer)")
	var egressAllow optionalString
	fs.Var(&egressAllow, "egress", "the tenant's egress allowance, space-separated rules as --egress-allow takes them (its paddock_egress claim; the server's and template's allowances still narrow it; \"\" allows nothing; unset: no claim)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *subject == "":
		return errors.New("--subject is required")
	case len(*subject) > 256:
		return errors.New("--subject is too long (at most 256 bytes)")
	case *ttl <= 0:
		return errors.New("--ttl must be positive")
	}
	granted := splitList(*scopes)
	for _, s := range granted {
		if !slices.Contains(tokenScopes, s) {
			return fmt.Errorf("--scopes: unknown scope %q (known: %s)", s, strings.Join(tokenScopes, ", "))
		}
	}
	method, key, err := signingKey(*secretFile, *privateKey)
	if err != nil {
		return err
	}
	now := time.Now()
	claims := jwt.MapClaims{
		"sub":   *subject,
		"scope": strings.Join(granted, " "),
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(*ttl).Unix(),
		"jti":   randomID(),
	}
	if *audience != "" {
		claims["aud"] = *audience
	}
	if *issuer != "" {
		claims["iss"] = *issuer
	}
	if egressAllow.set {
		rules := strings.Fields(egressAllow.v)
		if _, err := egress.NewPolicy(rules, nil); err != nil {
			return fmt.Errorf("--egress: %w", err)
		}
		claims["paddock_egress"] = append([]string{}, rules...)
	}
	signed, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	_, err = fmt.Fprintln(stdout, signed)
	return err
}

// signingKey loads exactly one of the secret file and the private key.
func signingKey(secretFile, privateKey string) (jwt.SigningMethod, any, error) {
	switch {
	case secretFile != "" && privateKey != "":
		return nil, nil, errors.New("give --jwt-hs256-secret-file or --private-key, not both")
	case secretFile != "":
		secret, err := readSecret(secretFile)
		return jwt.SigningMethodHS256, secret, err
	case privateKey != "":
		key, err := readPrivateKey(privateKey)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := key.(ed25519.PrivateKey); ok {
			return jwt.SigningMethodEdDSA, key, nil
		}
		return jwt.SigningMethodRS256, key, nil
	}
	return nil, nil, errors.New("a key is required: --jwt-hs256-secret-file or --private-key")
}

// readSecret reads an HS256 secret; a trailing newline is not part of it.
func readSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--jwt-hs256-secret-file: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < core.MinHS256SecretBytes {
		return nil, fmt.Errorf("--jwt-hs256-secret-file %s: the secret has %d bytes; it needs at least %d "+
			"(make one with: head -c 48 /dev/urandom | base64 > %s)", path, len(b), core.MinHS256SecretBytes, path)
	}
	return b, nil
}

// readPublicKey reads a PEM Ed25519 or RSA public key.
func readPublicKey(path string) (crypto.PublicKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, fmt.Errorf("--jwt-public-key: %w", err)
	}
	var key crypto.PublicKey
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		if strings.HasSuffix(block.Type, "PRIVATE KEY") {
			return nil, fmt.Errorf("--jwt-public-key %s holds a private key; give the server only the public key "+
				"(openssl pkey -in %s -pubout)", path, path)
		}
		return nil, fmt.Errorf("--jwt-public-key %s: PEM block %q is not a public key", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("--jwt-public-key %s: %w", path, err)
	}
	if err := (core.Auth{PublicKey: key}).Validate(); err != nil {
		return nil, fmt.Errorf("--jwt-public-key %s: %w", path, err)
	}
	return key, nil
}

// readPrivateKey reads a PEM Ed25519 or RSA private key.
func readPrivateKey(path string) (crypto.Signer, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, fmt.Errorf("--private-key: %w", err)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("--private-key %s: PEM block %q is not a private key", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("--private-key %s: %w", path, err)
	}
	switch k := key.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < core.MinRSABits {
			return nil, fmt.Errorf("--private-key %s: RSA key must have at least %d bits", path, core.MinRSABits)
		}
		return k, nil
	}
	return nil, fmt.Errorf("--private-key %s: unsupported key type %T (want Ed25519 or RSA)", path, key)
}

func readPEM(path string) (*pem.Block, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM block", path)
	}
	return block, nil
}

// randomID is a token id (jti): 128 random bits in hex.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}
