//go:build unix

package container

import "syscall"

// noFollow: attachments are never read or written through a symlink.
const noFollow = syscall.O_NOFOLLOW
