package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// Builder makes builds and keeps them in a cache. Its zero value builds
// into DefaultCacheDir with one job per CPU, gcc (else cc), and ccache when
// it is installed.
type Builder struct {
	// Cache is the cache directory; empty means DefaultCacheDir().
	Cache string
	// CacheWord is what the edge calls the option naming Cache, said with
	// how to name one when DefaultCacheDir finds none (CacheDirError).
	CacheWord string
	// Jobs is make's -j; zero means one per CPU.
	Jobs int
	// CC is the C compiler; empty means gcc, else cc.
	CC string
	// NoCCache turns ccache off even when it is installed.
	NoCCache bool
	// Progress, when not nil, sees each phase start and end.
	Progress func(Event)
}

// Spec is what to build: a Postgres or a Command.
type Spec interface {
	// Label names the build in progress and errors.
	Label() string
	plan(ctx context.Context, b *Builder, t toolchain) (*plan, error)
}

// plan is a spec resolved to its key: what the manifest will say and how
// to make the build into entry (the future cache entry) using scratch.
type plan struct {
	key      string
	manifest Manifest
	make     func(ctx context.Context, s *session, scratch, entry, root string, m *Manifest) error
}

// Build is a build in the cache.
type Build struct {
	Key string
	// Root is the build's cache entry: manifest.json, build.log and Dir.
	Root string
	// Dir is what the build is used through: a PostgreSQL build's install
	// prefix (bin, lib, share) or a Command's kept tree or prefix.
	Dir      string
	Manifest *Manifest
	// Cached says the build was found in the cache, not made now.
	Cached bool
}

// BinDir returns the directory of a PostgreSQL build's server binaries.
func (b *Build) BinDir() string {
	if b.Manifest != nil && b.Manifest.Bin != "" {
		return filepath.Join(b.Dir, b.Manifest.Bin)
	}
	return filepath.Join(b.Dir, "bin")
}

// Cache entry layout: <cache>/<key>/{manifest.json,build.log,used,install|tree}.
const (
	manifestFile = "manifest.json"
	logFile      = "build.log"
	usedFile     = "used"
	installDir   = "install"
	treeDir      = "tree"
	tmpDir       = "tmp"
	locksDir     = "locks"
	failedDir    = "failed"
)

// DefaultCacheDir returns $PGSCALE_BUILD_CACHE when set, else
// /var/cache/pgscale/builds for root (whose home the postgres user that
// runs root's clusters cannot enter), else pgscale/builds in the user's
// cache directory; without one, a *CacheDirError.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("PGSCALE_BUILD_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	if os.Geteuid() == 0 {
		return "/var/cache/pgscale/builds", nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", &CacheDirError{Err: err}
	}
	return filepath.Join(d, "pgscale", "builds"), nil
}

// CacheDirError says DefaultCacheDir found no directory for the cache:
// Err why, and Word, when the edge sets it, what it calls the option
// that names one.
type CacheDirError struct {
	Err  error
	Word string
}

func (e *CacheDirError) Error() string {
	if e.Word == "" {
		return "build cache: " + e.Err.Error()
	}
	return "build cache: " + e.Err.Error() + "; name one with " + e.Word
}

func (e *CacheDirError) Unwrap() error { return e.Err }

func (b *Builder) cacheDir() (string, error) {
	if b.Cache == "" {
		dir, err := DefaultCacheDir()
		var ce *CacheDirError
		if errors.As(err, &ce) {
			ce.Word = b.CacheWord
		}
		return dir, err
	}
	return filepath.Abs(b.Cache)
}

func (b *Builder) jobs() int {
	if b.Jobs > 0 {
		return b.Jobs
	}
	return runtime.NumCPU()
}

func (b *Builder) resolve(ctx context.Context, spec Spec) (*plan, toolchain, error) {
	t, err := findToolchain(ctx, b.CC, b.NoCCache)
	if err != nil {
		return nil, t, fmt.Errorf("build %s: %w", spec.Label(), err)
	}
	p, err := spec.plan(ctx, b, t)
	if err != nil {
		return nil, t, fmt.Errorf("build %s: %w", spec.Label(), err)
	}
	return p, t, nil
}

// Key returns the cache key spec would be built under, without building it.
func (b *Builder) Key(ctx context.Context, spec Spec) (string, error) {
	p, _, err := b.resolve(ctx, spec)
	if err != nil {
		return "", err
	}
	return p.key, nil
}

// Lookup returns spec's build when the cache holds it, else nil. It does
// not count as a use of the build.
func (b *Builder) Lookup(ctx context.Context, spec Spec) (*Build, error) {
	bld, _, err := b.Find(ctx, spec)
	return bld, err
}

// Find returns spec's key, and its build when the cache holds it (else
// nil), without building; it does not count as a use of the build.
func (b *Builder) Find(ctx context.Context, spec Spec) (*Build, string, error) {
	cache, key, err := b.locate(ctx, spec)
	if err != nil {
		return nil, "", err
	}
	return lookup(cache, key), key, nil
}

// locate returns the cache directory and spec's key in it.
func (b *Builder) locate(ctx context.Context, spec Spec) (cache, key string, err error) {
	p, _, err := b.resolve(ctx, spec)
	if err != nil {
		return "", "", err
	}
	if cache, err = b.cacheDir(); err != nil {
		return "", "", err
	}
	return cache, p.key, nil
}

// Build returns spec's build from the cache, making it first when the cache
// does not hold it. A failed build returns an *Error; nothing of it is
// cached. When another process is making the same build, Build waits for it
// and returns its result.
func (b *Builder) Build(ctx context.Context, spec Spec) (*Build, error) {
	p, t, err := b.resolve(ctx, spec)
	if err != nil {
		return nil, err
	}
	cache, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	return b.obtain(ctx, cache, spec.Label(), p, t)
}

func (b *Builder) emit(e Event) {
	if b.Progress != nil {
		b.Progress(e)
	}
}

func (b *Builder) obtain(ctx context.Context, cache, name string, p *plan, t toolchain) (*Build, error) {
	if bld := lookup(cache, p.key); bld != nil {
		touch(bld.Root)
		b.emit(Event{Name: name, Key: p.key, Phase: PhaseCached, Done: true})
		return bld, nil
	}
	for _, d := range []string{tmpDir, locksDir, failedDir} {
		if err := os.MkdirAll(filepath.Join(cache, d), 0o755); err != nil {
			return nil, fmt.Errorf("build cache: %w", err)
		}
	}
	unlock, err := lockKey(ctx, cache, p.key, func(waiting bool, took time.Duration) {
		b.emit(Event{Name: name, Key: p.key, Phase: PhaseWait, Done: !waiting, Elapsed: took})
	})
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	defer unlock()
	if bld := lookup(cache, p.key); bld != nil {
		touch(bld.Root)
		b.emit(Event{Name: name, Key: p.key, Phase: PhaseCached, Done: true})
		return bld, nil
	}
	removeStale(cache, p.key)
	scratch, err := os.MkdirTemp(filepath.Join(cache, tmpDir), p.key+"-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	defer os.RemoveAll(scratch)
	entry := filepath.Join(scratch, "entry")
	if err := os.Mkdir(entry, 0o755); err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	logf, err := os.Create(filepath.Join(entry, logFile))
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	defer logf.Close()
	root := filepath.Join(cache, p.key)
	s := &session{name: name, key: p.key, log: logf, logPath: logf.Name(),
		env: buildEnv(scratch, t), progress: b.Progress}
	m := p.manifest
	m.Name = name
	m.CCache = t.ccache != ""
	m.Jobs = b.jobs()
	fmt.Fprintf(logf, "pgscale build %s, key %s\n", name, p.key)
	start := time.Now()
	if err := p.make(ctx, s, scratch, entry, root, &m); err != nil {
		var be *Error
		if !errors.As(err, &be) {
			return nil, fmt.Errorf("build %s: %w", name, err)
		}
		if be.Log == "" {
			be.Log = keepFailedLog(cache, p.key, logf)
		}
		if ctx.Err() == nil {
			rememberFailure(cache, p.key, be)
		}
		return nil, err
	}
	m.Phases = s.phases
	m.Seconds = time.Since(start).Seconds()
	m.Created = time.Now().UTC()
	if err := writeManifest(entry, &m); err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	os.WriteFile(filepath.Join(entry, usedFile), nil, 0o644)
	if err := os.Rename(entry, root); err != nil {
		if bld := lookup(cache, p.key); bld != nil {
			return bld, nil
		}
		return nil, fmt.Errorf("build %s: into the cache: %w", name, err)
	}
	forgetFailure(cache, p.key)
	return &Build{Key: p.key, Root: root, Dir: filepath.Join(root, dirOf(&m)), Manifest: &m}, nil
}

// dirOf is the entry's subdirectory a build is used through.
func dirOf(m *Manifest) string {
	if m.Kind == KindCommand && m.Keep == KeepTree {
		return treeDir
	}
	return installDir
}

// lookup returns the cached build of key, or nil. An entry exists only
// complete: it is renamed into place after its manifest is written.
func lookup(cache, key string) *Build {
	root := filepath.Join(cache, key)
	m, err := ReadManifest(root)
	if err != nil || m.Key != key {
		return nil
	}
	return &Build{Key: key, Root: root, Dir: filepath.Join(root, dirOf(m)), Manifest: m, Cached: true}
}

// touch records that the build in root was used now. A build in a cache
// the user cannot write to is still used, only its time is not kept.
func touch(root string) {
	now := time.Now()
	if os.Chtimes(filepath.Join(root, usedFile), now, now) != nil {
		os.WriteFile(filepath.Join(root, usedFile), nil, 0o644)
	}
}

// keepFailedLog copies a failed build's log to <cache>/failed/<key>.log,
// which outlives the scratch directory, and returns its path.
func keepFailedLog(cache, key string, logf *os.File) string {
	dst := filepath.Join(cache, failedDir, key+".log")
	b, err := os.ReadFile(logf.Name())
	if err != nil || os.WriteFile(dst, b, 0o644) != nil {
		return logf.Name()
	}
	return dst
}

// keyOf hashes a key's material: any JSON-encodable struct whose fields
// are everything that decides a build's bytes.
func keyOf(material any) string {
	b, err := json.Marshal(material)
	if err != nil {
		panic(err) // the material is plain data
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
