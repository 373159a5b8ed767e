package plan

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// checkOut refuses, before anything starts, a result destination that
// cannot be written: a file (dir false) or a directory of files (a
// bundle, an A/B run's files). A run takes minutes; finding out at its
// end loses it.
func checkOut(path string, dir bool) error {
	var err error
	if dir {
		err = result.CheckWritableDir(path)
	} else {
		err = result.CheckWritable(path)
	}
	if err != nil {
		return usage.Errorf("the results cannot be written at %s: %v; nothing was run (choose another --out)", path, err)
	}
	return nil
}

// writeResult writes f at path. When it cannot (the destination became
// unwritable during the run, the disk filled up), it writes f under name
// in the first of result.RescueDirs that takes it, and the error says
// where: a run's measurements are never lost to its destination. A result
// refused for what it holds is refused anywhere, and not tried elsewhere.
// It returns where f was written, empty when nowhere.
func writeResult(path, name string, f *result.File) (string, error) {
	werr := result.Write(path, f)
	if werr == nil {
		return path, nil
	}
	werr = fmt.Errorf("write result file %s: %w", path, werr)
	var refused *result.RefusedError
	if errors.As(werr, &refused) {
		return "", werr
	}
	alt, aerr := result.WriteRescued(name, f)
	if aerr != nil {
		return "", errors.Join(werr, fmt.Errorf("nor could it be written elsewhere: %w", aerr))
	}
	return alt, fmt.Errorf("%w; the result is kept at %s instead", werr, alt)
}

// rescueName is the name a file of dir gets when rescued: dir's last
// element, then the file's, so that the files of one A/B run stay
// together.
func rescueName(dir, file string) string {
	return filepath.Join(filepath.Base(dir), file)
}
