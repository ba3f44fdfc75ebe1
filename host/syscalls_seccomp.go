//go:build linux && cgo

package host

import (
	"fmt"
	"sync"

	seccomp "github.com/seccomp/libseccomp-golang"

	"github.com/sbxrun/sbxrun/policy"
)

// Syscalls returns a resolver backed by libseccomp's syscall tables.
func Syscalls() policy.SyscallResolver { return resolver }

// resolver memoizes lookups: the tables are fixed for the process's life
// and each lookup is a cgo call, which dominated compile time.
var resolver = &libseccompResolver{}

type libseccompResolver struct {
	cache sync.Map // arch + "/" + name -> bool
}

var scmpArch = map[string]seccomp.ScmpArch{
	"amd64": seccomp.ArchAMD64,
	"arm64": seccomp.ArchARM64,
}

// Known resolves name on arch. libseccomp returns a negative pseudo number
// for a name it knows from another architecture only; that counts as unknown.
func (r *libseccompResolver) Known(name, arch string) (bool, error) {
	key := arch + "/" + name
	if v, ok := r.cache.Load(key); ok {
		return v.(bool), nil
	}
	a, ok := scmpArch[arch]
	if !ok {
		return false, fmt.Errorf("no libseccomp architecture for %q", arch)
	}
	nr, err := seccomp.GetSyscallFromNameByArch(name, a)
	known := err == nil && nr >= 0
	r.cache.Store(key, known)
	return known, nil
}
