package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	fileExt    = ".json"
	tempPrefix = ".tmp-"
)

// fileName is the job file's name for tenant's key: a hash, so that no
// client string ever becomes part of a path.
func fileName(tenant, key string) string {
	h := sha256.New()
	h.Write(binary.AppendUvarint(nil, uint64(len(tenant))))
	h.Write([]byte(tenant))
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil)) + fileExt
}

// isJobFile reports whether name has fileName's shape.
func isJobFile(name string) bool {
	stem, ok := strings.CutSuffix(name, fileExt)
	if !ok || len(stem) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(stem)
	return err == nil && strings.ToLower(stem) == stem
}

func (s *Store) path(name string) string { return filepath.Join(s.cfg.Dir, name) }

// writeFile replaces name's content with data atomically and durably: a
// temporary file is written and synced, renamed over name, and the
// directory synced.
func (s *Store) writeFile(name string, data []byte) (err error) {
	f, err := os.CreateTemp(s.cfg.Dir, tempPrefix+"*") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(f.Name(), s.path(name)); err != nil {
		return err
	}
	return syncDir(s.cfg.Dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// removeFile deletes path; a missing file is not an error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readJob reads a whole job file, its result included.
func readJob(path string) (Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Job{}, err
	}
	var job Job
	if err := json.Unmarshal(data, &job); err != nil {
		return Job{}, fmt.Errorf("decoding %s: %w", filepath.Base(path), err)
	}
	return job, nil
}

// readMeta reads a job file up to its result, which it leaves unread,
// and returns the job and the file's size. The job's Result is empty but
// not nil when the file has one.
func readMeta(path string) (Job, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Job{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Job{}, 0, err
	}
	var job Job
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Job{}, 0, fmt.Errorf("decoding %s: not a JSON object", filepath.Base(path))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Job{}, 0, fmt.Errorf("decoding %s: %w", filepath.Base(path), err)
		}
		var dst any
		switch tok {
		case "version":
			dst = &job.Version
		case "tenant":
			dst = &job.Tenant
		case "key":
			dst = &job.Key
		case "digest":
			dst = &job.Digest
		case "state":
			dst = &job.State
		case "created":
			dst = &job.Created
		case "finished":
			dst = &job.Finished
		case "result":
			job.Result = json.RawMessage{} // last, and not needed here
			return job, st.Size(), nil
		default:
			dst = new(json.RawMessage)
		}
		if err := dec.Decode(dst); err != nil {
			return Job{}, 0, fmt.Errorf("decoding %s: %w", filepath.Base(path), err)
		}
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return Job{}, 0, fmt.Errorf("decoding %s: %w", filepath.Base(path), err)
	}
	return job, st.Size(), nil
}
