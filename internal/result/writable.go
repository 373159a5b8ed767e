package result

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CheckWritable says, before a run spends its time, whether a file can be
// written at path: path is not a directory, and a file can be made in its
// directory or, when that does not exist yet, in the nearest directory
// above it that does (WriteFileAtomic creates the rest). It tries for
// real — creates and removes a file — as permissions alone do not tell
// (root ignores them; a read-only or immutable directory refuses root too).
func CheckWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return CheckWritableDir(filepath.Dir(path))
}

// CheckWritableDir is CheckWritable for a directory that files will be
// written in (a bundle, an A/B run's files).
func CheckWritableDir(dir string) error {
	d := dir
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		up := filepath.Dir(d)
		if up == d {
			return err
		}
		d = up
	}
	f, err := os.CreateTemp(d, ".pgscale-write-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write in %s: %w", d, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// RescueDirs are where WriteRescued tries, in order, when a result cannot
// be written where it was asked to be: the temporary directory, then the
// home directory.
func RescueDirs() []string {
	dirs := []string{os.TempDir()}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, home)
	}
	return dirs
}

// WriteRescued writes f, which could not be written where it was asked
// to be, at name (a file name, or a relative path) in the first of
// RescueDirs that takes it, so that a run's measurements are never lost
// to an unwritable destination. When name's first element is taken there,
// a time is added to it. It returns where it wrote f.
func WriteRescued(name string, f *File) (string, error) {
	var errs []error
	for _, dir := range RescueDirs() {
		p := filepath.Join(dir, name)
		first, rest, nested := strings.Cut(name, string(filepath.Separator))
		if _, err := os.Lstat(filepath.Join(dir, first)); err == nil {
			stamp := "-" + time.Now().UTC().Format("20060102T150405.000000000Z")
			if nested {
				p = filepath.Join(dir, first+stamp, rest)
			} else {
				p = filepath.Join(dir, strings.TrimSuffix(first, ".json")+stamp+".json")
			}
		}
		err := Write(p, f)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// WriteOrRescue writes f at path. When it cannot (the destination became
// unwritable during the run, the disk filled up), it writes f under name
// in the first of RescueDirs that takes it (WriteRescued), and the error
// says where: a run's measurements are never lost to its destination. A
// result refused for what it holds is refused anywhere, and not tried
// elsewhere. It returns where f was written, empty when nowhere.
func WriteOrRescue(path, name string, f *File) (string, error) {
	werr := Write(path, f)
	if werr == nil {
		return path, nil
	}
	werr = fmt.Errorf("write result file %s: %w", path, werr)
	var refused *RefusedError
	if errors.As(werr, &refused) {
		return "", werr
	}
	alt, aerr := WriteRescued(name, f)
	if aerr != nil {
		return "", errors.Join(werr, fmt.Errorf("nor could it be written elsewhere: %w", aerr))
	}
	return alt, fmt.Errorf("%w; the result is kept at %s instead", werr, alt)
}

// RelativeProfiles records each step's pprof file as the result file's
// contract has it (Profile): relative to the directory of the result
// file at resultPath when the pprof file is inside it, so that the
// directory can be moved or copied whole, else as an absolute path. The
// probe names the file relative to the directory pgscale runs in.
func RelativeProfiles(steps []Step, resultPath string) {
	dir, err := filepath.Abs(filepath.Dir(resultPath))
	if err != nil {
		return
	}
	for i := range steps {
		p := steps[i].Probes
		if p == nil {
			continue
		}
		profiles := []*Profile{p.Profile()}
		if p.Instructions() != nil {
			profiles = append(profiles, p.Instructions().PoolerProfile) // a pooler counted under Valgrind
		}
		for _, pr := range profiles {
			if pr == nil || pr.File == "" {
				continue
			}
			abs, err := filepath.Abs(pr.File)
			if err != nil {
				continue
			}
			pr.File = abs
			if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				pr.File = rel
			}
		}
	}
}
