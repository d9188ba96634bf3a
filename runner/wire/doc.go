// Package wire is the framed protocol between the host and the in-sandbox
// agent, spoken over the container's stdin (host → agent) and stdout
// (agent → host). User processes never hold these descriptors, so nothing a
// program prints can forge a frame.
//
// A frame is a 1-byte type, a 4-byte big-endian payload length and the
// payload. Control payloads are JSON; output payloads are raw bytes.
// wire imports only the standard library.
package wire
