//go:build linux && cgo

package container

import (
	"fmt"

	"github.com/opencontainers/runc/libcontainer/apparmor"
	"github.com/opencontainers/runc/libcontainer/capabilities"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Features reports what this build and host support, for `sbxrun
// features`. Cgroup v1 and v2 are supported by libcontainer; the systemd
// cgroup driver is not offered by sbxrun (--systemd-cgroup is refused), so it
// is reported false. Seccomp is reported only when this binary was built
// with libseccomp (-tags seccomp).
func Features() *features.Features {
	t, f := true, false
	aa := apparmor.IsEnabled()
	feat := &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Hooks:         configs.KnownHookNames(),
		MountOptions:  specconv.KnownMountOptions(),
		Annotations:   map[string]string{},
		Linux: &features.Linux{
			Namespaces:   specconv.KnownNamespaces(),
			Capabilities: capabilities.KnownCapabilities(),
			Cgroup:       &features.Cgroup{V1: &t, V2: &t, Systemd: &f, SystemdUser: &f, Rdma: &f},
			Apparmor:     &features.Apparmor{Enabled: &aa},
			Selinux:      &features.Selinux{Enabled: &f},
			IntelRdt:     &features.IntelRdt{Enabled: &f},
		},
	}
	if seccomp.Enabled {
		feat.Linux.Seccomp = &features.Seccomp{Enabled: &t, Actions: seccomp.KnownActions(), Operators: seccomp.KnownOperators(),
			Archs: seccomp.KnownArchs(), KnownFlags: seccomp.KnownFlags(), SupportedFlags: seccomp.SupportedFlags()}
		major, minor, patch := seccomp.Version()
		feat.Annotations["io.github.seccomp.libseccomp.version"] = fmt.Sprintf("%d.%d.%d", major, minor, patch)
	} else {
		feat.Linux.Seccomp = &features.Seccomp{Enabled: &f}
	}
	return feat
}
