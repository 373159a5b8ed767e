package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Failure is a build that failed, remembered in the cache as
// <cache>/failed/<key>.json beside its log (<key>.log) until a build of the
// same key succeeds or a prune (--all) removes it. An interrupted build is
// not a failure and is not remembered.
type Failure struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	// Phase is the phase that failed, Err its cause as Error said it.
	Phase string `json:"phase"`
	Err   string `json:"error"`
	// Log is the failed build's log; Tail the failed phase's last lines.
	Log  string   `json:"log"`
	Tail []string `json:"tail,omitempty"`
	// When is when the build failed.
	When time.Time `json:"when"`
}

// failureFile is where key's failure is remembered.
func failureFile(cache, key string) string {
	return filepath.Join(cache, failedDir, key+".json")
}

// rememberFailure writes be as key's failure. A failure that cannot be
// written is not remembered: the next build of the key tries again.
func rememberFailure(cache, key string, be *Error) {
	f := Failure{Key: key, Name: be.Name, Phase: be.Phase, Log: be.Log, Tail: be.Tail, When: time.Now().UTC()}
	if be.Err != nil {
		f.Err = be.Err.Error()
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return
	}
	tmp := failureFile(cache, key) + ".tmp"
	if os.WriteFile(tmp, append(b, '\n'), 0o644) == nil {
		os.Rename(tmp, failureFile(cache, key))
	}
}

// forgetFailure removes key's remembered failure and its log: the key has
// built.
func forgetFailure(cache, key string) {
	os.Remove(failureFile(cache, key))
	os.Remove(filepath.Join(cache, failedDir, key+".log"))
}

// readFailure returns key's remembered failure, or nil.
func readFailure(cache, key string) (*Failure, error) {
	b, err := os.ReadFile(failureFile(cache, key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("build cache: %w", err)
	}
	var f Failure
	if err := json.Unmarshal(b, &f); err != nil || f.Key != key {
		return nil, nil // a record torn or not of this key: as good as none
	}
	return &f, nil
}

// Failed returns the remembered failure of spec's key, or nil when its
// last build did not fail (or the cache holds its build), without
// building: pgscale bisect skips a commit whose build is known to fail.
// Build itself always tries again.
func (b *Builder) Failed(ctx context.Context, spec Spec) (*Failure, error) {
	cache, key, err := b.locate(ctx, spec)
	if err != nil {
		return nil, err
	}
	if lookup(cache, key) != nil {
		return nil, nil
	}
	return readFailure(cache, key)
}

// AsError returns the failure as the *Error its build returned, for a
// caller that treats both alike.
func (f *Failure) AsError() *Error {
	return &Error{Name: f.Name, Key: f.Key, Phase: f.Phase, Log: f.Log, Tail: f.Tail, Err: errors.New(f.Err)}
}
