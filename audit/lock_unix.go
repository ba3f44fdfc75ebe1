//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive advisory lock on f, released by the returned func.
func lock(f *os.File) (func(), error) {
	// Go installs its signal handlers with SA_RESTART, so a blocking flock
	// is restarted by the kernel rather than failing with EINTR.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }, nil
}
