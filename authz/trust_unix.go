//go:build unix

package authz

import (
	"os"
	"syscall"

	"github.com/sbxrun/sbxrun/errcode"
)

// trusted refuses a token store that someone other than its owner could
// have written: whoever can write the hash list can mint overrides.
func (o *Overrides) trusted() error {
	for _, p := range []string{o.Dir, o.path()} {
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return errcode.Errorf(errcode.OverrideInvalid, "no override tokens exist on this host (%s)", p)
		}
		if err != nil {
			return errcode.Errorf(errcode.OverrideInvalid, "cannot check override token store: %v", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != o.Owner || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm()&0o022 != 0 {
			return errcode.Errorf(errcode.OverrideInvalid, "override token store %s is not owned by uid %d or is writable by others; not trusted", p, o.Owner)
		}
	}
	return nil
}
