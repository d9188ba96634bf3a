package runsc_test

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// /dev/shm is a tmpfs of the run's disk size, like /tmp: past it a write
// fails with ENOSPC, within it POSIX shared memory still works.
func TestGVisorDevShmUnderDiskLimit(t *testing.T) {
	e := newRealEnv(t)
	spec := e.specs["python"]
	spec.Limits.DiskBytes = 16 << 20
	e.specs["python-16m"] = spec
	code := "import errno, multiprocessing, os\n" +
		"st = os.statvfs('/dev/shm')\nprint('size', st.f_blocks * st.f_frsize >> 20)\n" +
		"with open('/dev/shm/small', 'wb') as f:\n    f.write(b'x' * (1 << 20))\nprint('1 MiB written')\nos.remove('/dev/shm/small')\n" +
		"lock = multiprocessing.Lock()\nwith lock:\n    print('semaphore works')\n" +
		"try:\n    with open('/dev/shm/big', 'wb') as f:\n        for _ in range(60):\n            f.write(b'x' * (1 << 20))\n    print('60 MiB written')\n" +
		"except OSError as e:\n    print('refused', e.errno == errno.ENOSPC, 15 << 20 <= os.path.getsize('/dev/shm/big') <= 16 << 20)\n"
	res := e.run(t, "python-16m", runner.RunRequest{Code: code, Timeout: 30 * time.Second})
	want := "size 16\n1 MiB written\nsemaphore works\nrefused True True\n"
	if string(res.Stdout) != want || res.Reason != runner.ReasonOK {
		t.Fatalf("stdout %q reason %s stderr %.300q; want %q, ok", res.Stdout, res.Reason, res.Stderr, want)
	}
}
