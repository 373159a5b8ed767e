package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownerFile is the file inside an ephemeral cluster's directory that the
// pgscale process which made it holds locked (flock) for as long as it
// lives, with its pid written in it. The kernel drops the lock however the
// process ends, kill -9 included: a directory whose owner file nobody
// holds was left behind by a pgscale that died before removing it.
const ownerFile = "pgscale.lock"

// own marks dir as this process's: its owner file, created, locked, then
// given this process's pid (a reader takes an empty file for one being
// made). The returned file holds the lock until it is closed or the
// process ends.
func own(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// RemoveStale removes the cluster directories under parent (pgscale-*)
// that a pgscale process left behind when it died without cleaning up
// (kill -9, a crash): those whose owner file holds a pid and is locked by
// no process, and in which no server runs. A directory is never removed by
// its name alone: one without an owner file (a --keep cluster, one made by
// an older pgscale, anything else named alike) is left as it is. It returns
// what it removed and the last error met removing one.
func RemoveStale(parent string) ([]string, error) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "pgscale-*"))
	var removed []string
	var lastErr error
	for _, dir := range dirs {
		lock, pid := staleDir(dir)
		if lock == nil {
			continue
		}
		err := os.RemoveAll(dir)
		lock.Close()
		if err != nil {
			lastErr = fmt.Errorf("remove %s, left by pgscale pid %d: %w", dir, pid, err)
			continue
		}
		removed = append(removed, fmt.Sprintf("%s (pgscale pid %d)", dir, pid))
	}
	return removed, lastErr
}

// staleDir says whether dir was left by a dead pgscale process: if so, it
// returns its owner file, locked by this process so that no other pgscale
// removes it at the same time (close it once the directory is gone), and
// the dead process's pid; else nil.
func staleDir(dir string) (*os.File, int) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDONLY, 0)
	if err != nil {
		return nil, 0 // no owner file: not ours to judge
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, 0 // its pgscale is alive (or another is removing it)
	}
	b := make([]byte, 32)
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		f.Close()
		return nil, 0 // being made: locked and written a moment from now
	}
	if serverRunsIn(filepath.Join(dir, "data")) {
		f.Close()
		return nil, 0
	}
	return f, pid
}

// serverRunsIn says whether a postmaster still runs on dataDir: its
// postmaster.pid names a live process.
func serverRunsIn(dataDir string) bool {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
