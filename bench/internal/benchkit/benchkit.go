// Package benchkit holds what the benchmark programs under bench/ share:
// building the pgscale binary they run.
package benchkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Pgscale returns bin when given, else builds ./cmd/pgscale into dir and
// returns the binary's path.
func Pgscale(dir, bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "pgscale")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pgscale")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build pgscale: %w", err)
	}
	return bin, nil
}
