//go:build unix

package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens path without blocking on a FIFO and refuses anything
// but a regular file, checked on the descriptor itself.
func openRegular(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	// Regular files never block; clear O_NONBLOCK for an ordinary read.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// fdOpen reports whether fd is an open descriptor of this process.
func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}
