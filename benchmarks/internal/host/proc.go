package host

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseProcStatus reads the "Key:   N kB" lines of /proc/PID/status, in
// bytes; lines of other shapes are skipped.
func ParseProcStatus(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(v), " kB")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", sc.Text(), err)
		}
		out[k] = n << 10
	}
	return out, sc.Err()
}
