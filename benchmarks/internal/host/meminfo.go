package host

import (
	"fmt"
	"os"
)

// MemInfo is the host's memory as /proc/meminfo gives it, in bytes.
type MemInfo struct {
	Total, Available uint64
}

// ReadMemInfo reads MemTotal and MemAvailable from a meminfo file
// (/proc/meminfo).
func ReadMemInfo(path string) (MemInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return MemInfo{}, err
	}
	defer f.Close()
	st, err := ParseProcStatus(f)
	if err != nil {
		return MemInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	m := MemInfo{Total: st["MemTotal"], Available: st["MemAvailable"]}
	if m.Total == 0 || m.Available == 0 {
		return m, fmt.Errorf("%s: no MemTotal or MemAvailable", path)
	}
	return m, nil
}
