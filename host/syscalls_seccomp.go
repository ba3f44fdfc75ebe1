//go:build linux && cgo

package host

import (
	"fmt"

	seccomp "github.com/seccomp/libseccomp-golang"

	"github.com/sbxrun/sbxrun/policy"
)

// Syscalls returns a resolver backed by libseccomp's syscall tables.
func Syscalls() policy.SyscallResolver { return libseccompResolver{} }

type libseccompResolver struct{}

var scmpArch = map[string]seccomp.ScmpArch{
	"amd64": seccomp.ArchAMD64,
	"arm64": seccomp.ArchARM64,
}

// Known resolves name on arch. libseccomp returns a negative pseudo number
// for a name it knows from another architecture only; that counts as unknown.
func (libseccompResolver) Known(name, arch string) (bool, error) {
	a, ok := scmpArch[arch]
	if !ok {
		return false, fmt.Errorf("no libseccomp architecture for %q", arch)
	}
	nr, err := seccomp.GetSyscallFromNameByArch(name, a)
	if err != nil {
		return false, nil
	}
	return nr >= 0, nil
}
