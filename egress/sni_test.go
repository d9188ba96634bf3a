package egress

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"testing/iotest"
)

// clientHello is the first TLS record a crypto/tls client of cfg sends.
func clientHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() { _ = tls.Client(a, cfg).Handshake() }()
	defer a.Close()
	head := make([]byte, 5)
	if _, err := io.ReadFull(b, head); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint16(head[3:]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(head, body...)
}

// fragment splits a one-record hello into records of at most n bytes of
// payload each: the handshake message then spans records.
func fragment(rec []byte, n int) []byte {
	var out []byte
	payload := rec[5:]
	for len(payload) > 0 {
		k := min(n, len(payload))
		out = append(out, rec[0], rec[1], rec[2], byte(k>>8), byte(k))
		out = append(out, payload[:k]...)
		payload = payload[k:]
	}
	return out
}

func TestPeekServerName(t *testing.T) {
	hello := clientHello(t, &tls.Config{ServerName: "API.example.test", InsecureSkipVerify: true})
	bare := clientHello(t, &tls.Config{InsecureSkipVerify: true})
	split := fragment(hello, 100)
	tests := []struct {
		name   string
		in     io.Reader
		want   string
		read   []byte // what peek must hand back, read from in
		failed bool
	}{
		{"one read", bytes.NewReader(hello), "API.example.test", hello, false},
		{"a byte per read", iotest.OneByteReader(bytes.NewReader(hello)), "API.example.test", hello, false},
		{"over several records", iotest.HalfReader(bytes.NewReader(split)), "API.example.test", split, false},
		{"no server name", bytes.NewReader(bare), "", bare, false},
		{"not TLS", bytes.NewReader([]byte("GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n")), "", nil, true},
		{"cut short", bytes.NewReader(hello[:len(hello)/2]), "", hello[:len(hello)/2], true},
		{"empty", bytes.NewReader(nil), "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, read, err := peekServerName(tt.in)
			if (err != nil) != tt.failed || name != tt.want {
				t.Fatalf("peek = %q, %v; want %q, failed %v", name, err, tt.want, tt.failed)
			}
			if tt.read != nil && !bytes.Equal(read, tt.read) {
				t.Errorf("peek handed back %d bytes, want the %d it read", len(read), len(tt.read))
			}
		})
	}
}

// FuzzPeekServerName: whatever the bytes, peek returns, hands back a
// prefix of them and no more than maxHelloBytes, and finds a name only
// without an error.
func FuzzPeekServerName(f *testing.F) {
	hello := clientHello(f, &tls.Config{ServerName: "a.example.test", InsecureSkipVerify: true})
	f.Add(hello)
	f.Add(fragment(hello, 7))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{22, 3, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		name, read, err := peekServerName(bytes.NewReader(in))
		if !bytes.HasPrefix(in, read) || len(read) > maxHelloBytes {
			t.Fatalf("handed back %d bytes that are not a prefix of the input", len(read))
		}
		if err != nil && name != "" {
			t.Fatalf("a name %q with an error %v", name, err)
		}
	})
}
