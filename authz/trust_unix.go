//go:build unix

package authz

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sbxrun/sbxrun/errcode"
)

// CheckTrusted refuses a file (and the directory holding it) that someone
// other than owner (or root, who can write anything anyway) could have
// written: each must be owned by owner or root, not be a symlink, and not
// be writable by group or others. Every file that can
// change a tier — the override token store, connector bindings, the
// runtime's default tier — goes through this one rule: whoever can write
// such a file can loosen a sandbox. A missing file is reported through
// os.ErrNotExist so callers decide whether absence is fine.
func CheckTrusted(code errcode.Code, owner int, file string) error {
	for _, p := range []string{filepath.Dir(file), file} {
		fi, err := os.Lstat(p)
		if err != nil {
			if os.IsNotExist(err) {
				return errcode.Errorf(code, "%s: %w", p, os.ErrNotExist)
			}
			return errcode.Errorf(code, "cannot check %s: %v", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !ok || fi.Mode()&os.ModeSymlink != 0:
			return errcode.Errorf(code, "%s is a symlink; not trusted", p)
		case int(st.Uid) != owner && st.Uid != 0:
			return errcode.Errorf(code, "%s is owned by uid %d, not %d or root; not trusted", p, st.Uid, owner)
		case fi.Mode().Perm()&0o022 != 0:
			return errcode.Errorf(code, "%s is writable by group or others (mode %04o); not trusted", p, fi.Mode().Perm())
		case p == file && !fi.Mode().IsRegular():
			return errcode.Errorf(code, "%s is not a regular file; not trusted", p)
		}
	}
	return nil
}

// trusted refuses a token store that someone other than its owner could
// have written: whoever can write the hash list can mint overrides.
func (o *Overrides) trusted() error {
	err := CheckTrusted(errcode.OverrideInvalid, o.Owner, o.path())
	if errors.Is(err, os.ErrNotExist) {
		return errcode.Errorf(errcode.OverrideInvalid, "no override tokens exist on this host (%s)", o.path())
	}
	return err
}
