package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockKey takes the lock of key in cache, waiting (and saying so through
// wait) while another process holds it, and returns its release.
func lockKey(ctx context.Context, cache, key string, wait func(waiting bool, took time.Duration)) (func(), error) {
	f, err := os.OpenFile(filepath.Join(cache, locksDir, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	start := time.Now()
	waited := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if !waited {
			waited = true
			wait(true, 0)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if waited {
		wait(false, time.Since(start))
	}
	return func() { f.Close() }, nil
}

// tryLock takes key's lock if no one holds it.
func tryLock(cache, key string) (func(), bool) {
	f, err := os.OpenFile(filepath.Join(cache, locksDir, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// removeStale removes scratch directories key's builds left behind when
// their process was killed. The caller holds key's lock, so none is in use.
func removeStale(cache, key string) {
	dirs, _ := os.ReadDir(filepath.Join(cache, tmpDir))
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), key+"-") {
			os.RemoveAll(filepath.Join(cache, tmpDir, d.Name()))
		}
	}
}
