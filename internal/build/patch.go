package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// applyPatches applies a source's patches to its exported copy in dir, in
// order: each with git apply (all of it or nothing), else with patch -p1
// when a dry run of it succeeds (patch tolerates fuzz). The bytes applied
// are the bytes the key hashed.
func applyPatches(ctx context.Context, s *session, dir string, r *resolved) error {
	for i, data := range r.patches {
		name := r.rec.Patches[i].Path
		pf := filepath.Join(filepath.Dir(dir), fmt.Sprintf("%s.patch%d", filepath.Base(dir), i+1))
		if err := os.WriteFile(pf, data, 0o644); err != nil {
			return err
		}
		// The copy is no repository: git must not look for one above it.
		ceiling := []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
		if s.run(ctx, dir, ceiling, "git", "apply", "--whitespace=nowarn", pf) == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(s.log, "git apply failed; trying patch -p1\n")
		if err := s.run(ctx, dir, nil, "patch", "-p1", "--dry-run", "--batch", "--forward", "-i", pf); err != nil {
			return fmt.Errorf("%s does not apply", name)
		}
		if err := s.run(ctx, dir, nil, "patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", pf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
