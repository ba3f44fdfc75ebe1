//go:build linux && cgo

package host

import (
	"testing"

	seccomp "github.com/seccomp/libseccomp-golang"
)

// TestTableMatchesLibseccomp: the embedded table (used where libseccomp is
// not linked) says exactly what libseccomp says. On drift, regenerate with
// go run -tags seccomp ./hack/gensyscalls > host/syscalls_table.go
func TestTableMatchesLibseccomp(t *testing.T) {
	for goarch, arch := range map[string]seccomp.ScmpArch{"amd64": seccomp.ArchAMD64, "arm64": seccomp.ArchARM64} {
		var live []string
		seen := map[string]bool{}
		for nr := 0; nr < 1024; nr++ {
			if name, err := seccomp.ScmpSyscall(nr).GetNameByArch(arch); err == nil && name != "" && !seen[name] {
				seen[name] = true
				live = append(live, name)
			}
		}
		for _, n := range syscallTable[goarch] {
			if !seen[n] {
				t.Errorf("%s: table has %q, libseccomp does not", goarch, n)
			}
		}
		if len(live) != len(syscallTable[goarch]) {
			t.Errorf("%s: libseccomp knows %d names, the table %d", goarch, len(live), len(syscallTable[goarch]))
		}
		for _, n := range syscallTable[goarch] {
			ok, err := Syscalls().Known(n, goarch)
			if !ok || err != nil {
				t.Errorf("%s: libseccomp resolver rejects table name %q", goarch, n)
			}
		}
	}
	if ok, _ := Syscalls().Known("frobnicate", "amd64"); ok {
		t.Error("unknown name accepted")
	}
}
