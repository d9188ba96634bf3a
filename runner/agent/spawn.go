package agent

import (
	"fmt"
	"os"
	"syscall"
)

// Starting user processes: the interpreter (interpreter.go) and a kernel's
// commands (command.go) start the same way.

// userPipes creates one pipe per descriptor of a user process; childWrites
// says which descriptors the child writes. ours are the agent's ends,
// theirs the child's, given to cfg's user, so that it may reopen them
// through /proc/self/fd (/dev/stdout, the drivers' close-on-exec copies).
// On failure nothing stays open.
func userPipes(cfg Config, childWrites []bool) (ours, theirs []*os.File, err error) {
	ours, theirs = make([]*os.File, len(childWrites)), make([]*os.File, len(childWrites))
	fail := func(err error) ([]*os.File, []*os.File, error) {
		closeFiles(ours)
		closeFiles(theirs)
		return nil, nil, err
	}
	for i, writes := range childWrites {
		rd, wr, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("creating pipe: %w", err))
		}
		if writes {
			ours[i], theirs[i] = rd, wr
		} else {
			ours[i], theirs[i] = wr, rd
		}
		if cfg.switchesUser() {
			if err := theirs[i].Chown(cfg.UID, cfg.GID); err != nil {
				return fail(fmt.Errorf("giving a pipe to the user: %w", err))
			}
		}
	}
	return ours, theirs, nil
}

// spawnUser starts path with argv and env in dir, as cfg's user, in a
// process group of its own, killed when the agent dies, with files as its
// descriptors 0, 1, 2… The reaper watches it. files are closed in the
// agent either way: they are the child's.
func spawnUser(r *reaper, cfg Config, path string, argv, env []string, dir string, files []*os.File) (int, <-chan reaped, error) {
	defer closeFiles(files)
	spa := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cfg.switchesUser() {
		spa.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), Groups: []uint32{}}
	}
	fds := make([]uintptr, len(files))
	for i, f := range files {
		// Fd puts the child's ends in blocking mode, as a child expects.
		fds[i] = f.Fd()
	}
	attr := &syscall.ProcAttr{Dir: dir, Env: env, Files: fds, Sys: spa}
	pid, status, err := r.spawn(func() (int, error) { return syscall.ForkExec(path, argv, attr) })
	if err != nil {
		return 0, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return pid, status, nil
}

// closeFiles closes every file in fs that is not nil.
func closeFiles(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
