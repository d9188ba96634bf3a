package jupyterdoor

import "strings"

// Jupyter clients want kernel and session ids in UUID form (Jupyter
// Server's routes match 8-4-4-4-12 groups), and Paddock's session ids are
// 32 hex digits: the door shows the same digits grouped as a UUID and
// takes either form back.

// kernelID is the Jupyter kernel id of Paddock session id.
func kernelID(sessionID string) string {
	if len(sessionID) != 32 || !isHex(sessionID) {
		return sessionID
	}
	s := sessionID
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

// sessionID is the Paddock session id of a Jupyter kernel id.
func sessionID(id string) string {
	if len(id) != 36 {
		return id
	}
	if s := strings.ReplaceAll(id, "-", ""); len(s) == 32 && isHex(s) && id == kernelID(s) {
		return s
	}
	return id
}

func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}
