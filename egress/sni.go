package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// maxHelloBytes bounds what is read, and kept, while looking for the
// server name: a ClientHello is one handshake message, at most a few
// records.
const maxHelloBytes = 64 << 10

// errHelloRead stops crypto/tls's handshake once it has parsed the
// ClientHello: peekServerName wants its server name only.
var errHelloRead = errors.New("client hello read")

// errNoHello: the bytes are not a TLS ClientHello.
var errNoHello = errors.New("not a TLS client hello")

// peekServerName reads a TLS ClientHello from r and returns the server
// name it asks for ("" when it names none) and every byte it read, to be
// passed on before the rest. crypto/tls parses the hello; nothing is
// decrypted and nothing is written back. An error means no ClientHello
// could be read (not TLS, too long, or r failed).
func peekServerName(r io.Reader) (string, []byte, error) {
	var seen bytes.Buffer
	src := io.TeeReader(io.LimitReader(r, maxHelloBytes), &seen)
	var name string
	var got bool
	srv := tls.Server(readOnlyConn{r: src}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name, got = h.ServerName, true
			return nil, errHelloRead
		},
	})
	err := srv.Handshake()
	if got {
		return name, seen.Bytes(), nil
	}
	if err == nil {
		err = errNoHello
	}
	return "", seen.Bytes(), errors.Join(errNoHello, err)
}

// readOnlyConn is a net.Conn that reads from r and swallows writes (the
// alert crypto/tls sends when the handshake stops), for peekServerName.
type readOnlyConn struct{ r io.Reader }

func (c readOnlyConn) Read(b []byte) (int, error)     { return c.r.Read(b) }
func (readOnlyConn) Write(b []byte) (int, error)      { return len(b), nil }
func (readOnlyConn) Close() error                     { return nil }
func (readOnlyConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (readOnlyConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (readOnlyConn) SetDeadline(time.Time) error      { return nil }
func (readOnlyConn) SetReadDeadline(time.Time) error  { return nil }
func (readOnlyConn) SetWriteDeadline(time.Time) error { return nil }

// prefixConn is a connection whose first bytes read are prefix: a peeked
// ClientHello passed on ahead of the rest.
type prefixConn struct {
	net.Conn
	prefix io.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if c.prefix != nil {
		n, err := c.prefix.Read(b)
		if n > 0 || !errors.Is(err, io.EOF) {
			return n, err
		}
		c.prefix = nil
	}
	return c.Conn.Read(b)
}

// CloseWrite half-closes the connection when it can.
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
