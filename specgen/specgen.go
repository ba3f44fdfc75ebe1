// Package specgen turns policy.Grants into a complete OCI runtime spec:
// namespaces, mounts, capabilities, seccomp, rlimits, cgroup resources,
// environment, user and hostname. It is pure (no OS calls) and builds on
// every platform, so specs can be generated and linted anywhere.
//
// Output is deterministic: Grants are already sorted, slices are emitted in
// a fixed order and maps are marshalled with sorted keys, so the same Grants
// always give byte-identical JSON (the determinism invariant, docs/tiers.md).
package specgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// Annotations sbxrun writes into generated specs and reads from incoming ones.
const (
	AnnotationTier       = "dev.sbx.tier"
	AnnotationConnector  = "dev.sbx.connector"
	AnnotationLevel      = "dev.sbx.level"
	AnnotationGrantsHash = "dev.sbx.grants-sha256"
	AnnotationUnenforced = "dev.sbx.unenforced"
	AnnotationNetAllow   = "dev.sbx.network.allow"
	AnnotationExec       = "dev.sbx.exec"
)

// Options are the few choices that are about the bundle, not the policy.
type Options struct {
	// RootPath is root.path (default "rootfs", relative to the bundle).
	RootPath string
}

// Generate builds the OCI spec for g.
func Generate(g *policy.Grants, opts Options) (*specs.Spec, error) {
	if g == nil {
		return nil, errcode.Errorf(errcode.CompileError, "no grants")
	}
	root := opts.RootPath
	if root == "" {
		root = "rootfs"
	}
	seccomp, err := Seccomp(g)
	if err != nil {
		return nil, err
	}
	hash, err := GrantsHash(g)
	if err != nil {
		return nil, err
	}
	s := &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: root, Readonly: g.FS.RootfsReadonly},
		Process:  process(g),
		Hostname: g.Isolate.Hostname,
		Mounts:   mounts(g),
		Linux: &specs.Linux{
			UIDMappings:       idMap(g.Identity.UIDMap),
			GIDMappings:       idMap(g.Identity.GIDMap),
			Namespaces:        namespaces(g),
			Resources:         resources(g),
			RootfsPropagation: "rprivate",
			Seccomp:           seccomp,
			MaskedPaths:       append([]string{}, g.Isolate.MaskedPaths...),
			ReadonlyPaths:     append([]string{}, g.Isolate.ReadonlyPaths...),
		},
		Annotations: map[string]string{
			AnnotationTier:       g.Tier,
			AnnotationLevel:      strconv.Itoa(g.Level),
			AnnotationGrantsHash: hash,
		},
	}
	if len(g.Unenforced) > 0 {
		s.Annotations[AnnotationUnenforced] = strings.Join(g.Unenforced, "\n")
	}
	if len(g.Net.Allow) > 0 {
		s.Annotations[AnnotationNetAllow] = strings.Join(g.Net.Allow, ",")
	}
	if g.Exec.InitialOnly {
		s.Annotations[AnnotationExec] = "initial-only"
	}
	return s, nil
}

// GrantsHash is the SHA-256 of the canonical Grants JSON: it ties a spec to
// the exact policy it was compiled from.
func GrantsHash(g *policy.Grants) (string, error) {
	b, err := json.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("hashing grants: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Marshal renders v as indented JSON with a trailing newline, without HTML
// escaping, so files are stable and readable.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func process(g *policy.Grants) *specs.Process {
	env := make([]string, 0, len(g.Env.Vars))
	for _, v := range g.Env.Vars {
		env = append(env, v.Name+"="+v.Value)
	}
	if g.Process.Terminal && !hasEnv(env, "TERM") {
		env = append(env, "TERM=xterm")
	}
	caps := append([]string{}, g.Identity.Capabilities...)
	p := &specs.Process{
		Terminal: g.Process.Terminal,
		User:     specs.User{UID: g.Identity.UID, GID: g.Identity.GID},
		Args:     append([]string{}, g.Process.Args...),
		Env:      env,
		Cwd:      g.Process.Cwd,
		// Effective, permitted and bounding carry the tier's set; inheritable
		// and ambient stay empty so nothing survives an exec of a file
		// without file capabilities.
		Capabilities: &specs.LinuxCapabilities{
			Bounding:  caps,
			Effective: append([]string{}, caps...),
			Permitted: append([]string{}, caps...),
		},
		NoNewPrivileges: g.Identity.NoNewPrivileges,
	}
	for _, r := range g.Limits.Rlimits {
		p.Rlimits = append(p.Rlimits, specs.POSIXRlimit{Type: r.Type, Hard: r.Hard, Soft: r.Soft})
	}
	return p
}

func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

func idMap(m *policy.IDMap) []specs.LinuxIDMapping {
	if m == nil {
		return nil
	}
	return []specs.LinuxIDMapping{{ContainerID: m.ContainerID, HostID: m.HostID, Size: m.Size}}
}

func namespaces(g *policy.Grants) []specs.LinuxNamespace {
	ns := []specs.LinuxNamespace{{Type: specs.PIDNamespace}}
	if !g.Isolate.HostNetwork {
		ns = append(ns, specs.LinuxNamespace{Type: specs.NetworkNamespace})
	}
	if !g.Isolate.HostIPC {
		ns = append(ns, specs.LinuxNamespace{Type: specs.IPCNamespace})
	}
	ns = append(ns,
		specs.LinuxNamespace{Type: specs.UTSNamespace},
		specs.LinuxNamespace{Type: specs.MountNamespace},
		specs.LinuxNamespace{Type: specs.CgroupNamespace},
	)
	if g.Identity.UserNamespace {
		ns = append(ns, specs.LinuxNamespace{Type: specs.UserNamespace})
	}
	return ns
}

func resources(g *policy.Grants) *specs.LinuxResources {
	// Deny every device by default; the runtime adds the standard set
	// (null, zero, full, random, urandom, tty, ptmx) itself.
	r := &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}}
	if !g.Limits.Cgroups {
		return r
	}
	mem := g.Limits.MemoryBytes
	r.Memory = &specs.LinuxMemory{Limit: &mem}
	if g.Limits.SwapBytes > 0 {
		swap := g.Limits.SwapBytes
		r.Memory.Swap = &swap
	}
	quota, period := g.Limits.CPUQuota, g.Limits.CPUPeriod
	r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	pids := g.Limits.Pids
	r.Pids = &specs.LinuxPids{Limit: &pids}
	return r
}

func mounts(g *policy.Grants) []specs.Mount {
	// A single-id user namespace has no gid 5 (tty); devpts would refuse it.
	singleID := g.Identity.GIDMap != nil && g.Identity.GIDMap.Size == 1
	pts := []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
	if !singleID {
		pts = append(pts, "gid=5")
	}
	m := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: pts},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: shmOptions(g)},
	}
	if g.IPC.Syscalls {
		m = append(m, specs.Mount{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}})
	}
	if g.Isolate.MountSysfs {
		if g.Rootless && g.Isolate.HostNetwork {
			// sysfs can only be mounted by the owner of the network
			// namespace; a rootless sandbox on the host network binds the
			// host's /sys read-only instead (what runc does).
			m = append(m, specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}})
		} else {
			m = append(m, specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}})
		}
	}
	tmp := []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(g.Limits.TmpBytes, 10)}
	if g.FS.TmpNoexec {
		tmp = append(tmp, "noexec")
	}
	m = append(m, specs.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: tmp})
	for _, p := range g.FS.Paths {
		// rprivate: nothing mounted later on the host shows up inside, and
		// nothing mounted inside can propagate back out.
		opts := []string{"rbind", "rprivate", "nosuid", "nodev"}
		if g.Exec.InitialOnly {
			opts = append(opts, "noexec")
		}
		if p.Writable {
			opts = append(opts, "rw")
		} else {
			opts = append(opts, "ro")
		}
		m = append(m, specs.Mount{Destination: p.Destination, Type: "bind", Source: p.Source, Options: opts})
	}
	return m
}

func shmOptions(g *policy.Grants) []string {
	o := []string{"nosuid", "noexec", "nodev", "mode=1777", "size=" + strconv.FormatInt(g.Limits.ShmBytes, 10)}
	if !g.IPC.ShmWritable {
		o = append(o, "ro")
	}
	return o
}
