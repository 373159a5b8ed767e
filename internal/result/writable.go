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
