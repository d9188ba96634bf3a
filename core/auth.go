package core

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultLeeway absorbs clock skew between the token's issuer and this
// server in exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// Key requirements.
const (
	MinHS256SecretBytes = 32
	MinRSABits          = 2048
)

// Auth configures token (JWT) authentication. With neither key set, it is
// off and every caller is the anonymous tenant "".
type Auth struct {
	// HS256Secret verifies HS256 tokens; at least MinHS256SecretBytes.
	HS256Secret []byte
	// PublicKey verifies EdDSA (an ed25519.PublicKey) or RS256 (an
	// *rsa.PublicKey, at least MinRSABits) tokens. At most one of
	// HS256Secret and PublicKey is set.
	PublicKey crypto.PublicKey
	// Audience, when set, must be among the token's aud.
	Audience string
	// Issuer, when set, must be the token's iss.
	Issuer string
	// Leeway is the clock skew allowed in exp, nbf and iat; zero means
	// DefaultLeeway.
	Leeway time.Duration
}

// Enabled reports whether a key is configured.
func (a Auth) Enabled() bool { return len(a.HS256Secret) > 0 || a.PublicKey != nil }

// Algorithm is the one signing algorithm accepted: HS256, EdDSA or
// RS256, or "" when auth is off or the key is unusable.
func (a Auth) Algorithm() string {
	switch k := a.PublicKey.(type) {
	case nil:
		if len(a.HS256Secret) > 0 {
			return jwt.SigningMethodHS256.Alg()
		}
	case ed25519.PublicKey:
		return jwt.SigningMethodEdDSA.Alg()
	case *rsa.PublicKey:
		if k != nil {
			return jwt.SigningMethodRS256.Alg()
		}
	}
	return ""
}

// Validate reports a key that cannot be used: both kinds set, a short
// secret, a small RSA key or an unsupported key type.
func (a Auth) Validate() error {
	if len(a.HS256Secret) > 0 && a.PublicKey != nil {
		return errors.New("give either an HS256 secret or a public key, not both")
	}
	if a.HS256Secret != nil && len(a.HS256Secret) < MinHS256SecretBytes {
		return fmt.Errorf("the HS256 secret has %d bytes; it needs at least %d", len(a.HS256Secret), MinHS256SecretBytes)
	}
	switch k := a.PublicKey.(type) {
	case nil:
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("Ed25519 public key has %d bytes, want %d", len(k), ed25519.PublicKeySize)
		}
	case *rsa.PublicKey:
		if k == nil || k.N == nil || k.N.BitLen() < MinRSABits {
			return fmt.Errorf("RSA public key must have at least %d bits", MinRSABits)
		}
	default:
		return fmt.Errorf("unsupported public key type %T (want Ed25519 or RSA)", a.PublicKey)
	}
	if a.Leeway < 0 {
		return errors.New("negative leeway")
	}
	return nil
}

// verifier checks tokens against one key and one algorithm.
type verifier struct {
	alg    string
	key    any // []byte, ed25519.PublicKey or *rsa.PublicKey
	parser *jwt.Parser
	cfg    Auth
}

// newVerifier returns nil when auth is off. a must be valid.
func newVerifier(a Auth, now func() time.Time) *verifier {
	if !a.Enabled() {
		return nil
	}
	if a.Leeway == 0 {
		a.Leeway = DefaultLeeway
	}
	v := &verifier{alg: a.Algorithm(), key: a.PublicKey, cfg: a}
	if v.key == nil {
		v.key = a.HS256Secret
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{v.alg}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(a.Leeway),
		jwt.WithTimeFunc(now),
		jwt.WithStrictDecoding(),
	}
	if a.Audience != "" {
		opts = append(opts, jwt.WithAudience(a.Audience))
	}
	if a.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.Issuer))
	}
	v.parser = jwt.NewParser(opts...)
	return v
}

// verify checks raw's signature and claims and returns its claims, or an
// invalid_token *Error saying precisely what is wrong with the token.
func (v *verifier) verify(raw string) (*tokenClaims, error) {
	if len(raw) > maxTokenBytes {
		return nil, tokenRefused("the bearer token is too long (at most %d bytes)", maxTokenBytes)
	}
	cl := &tokenClaims{}
	tok, err := v.parser.ParseWithClaims(raw, cl, v.keyFor)
	if err != nil {
		return nil, v.explain(err, tok, cl)
	}
	return cl, nil
}

// keyFor hands the parser the configured key, only for the configured
// algorithm (the parser has already refused any other).
func (v *verifier) keyFor(t *jwt.Token) (any, error) {
	if t.Method.Alg() != v.alg {
		return nil, errAlgorithm
	}
	if _, ok := t.Header["crit"]; ok {
		return nil, errCritHeader
	}
	return v.key, nil
}
