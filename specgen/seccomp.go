package specgen

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// archs are the seccomp architectures per target: the native one, plus the
// 32-bit compat ABIs when the tier allows them. Leaving compat ABIs out
// means a 32-bit syscall (int 0x80 on amd64) never reaches an allow rule.
var archs = map[string]struct{ native, compat []specs.Arch }{
	"amd64": {[]specs.Arch{specs.ArchX86_64}, []specs.Arch{specs.ArchX86, specs.ArchX32}},
	"arm64": {[]specs.Arch{specs.ArchAARCH64}, []specs.Arch{specs.ArchARM}},
}

var ops = map[string]specs.LinuxSeccompOperator{
	"SCMP_CMP_NE": specs.OpNotEqual, "SCMP_CMP_LT": specs.OpLessThan, "SCMP_CMP_LE": specs.OpLessEqual,
	"SCMP_CMP_EQ": specs.OpEqualTo, "SCMP_CMP_GE": specs.OpGreaterEqual, "SCMP_CMP_GT": specs.OpGreaterThan,
	"SCMP_CMP_MASKED_EQ": specs.OpMaskedEqual,
}

// Seccomp builds the OCI seccomp section, which is also a valid
// docker/podman seccomp profile (same field names).
func Seccomp(g *policy.Grants) (*specs.LinuxSeccomp, error) {
	a, ok := archs[g.Arch]
	if !ok {
		return nil, errcode.Errorf(errcode.CompileError, "no seccomp architectures for %q", g.Arch)
	}
	def := g.Syscalls.DefaultErrno
	s := &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &def,
		Architectures:   append([]specs.Arch{}, a.native...),
	}
	if g.Syscalls.CompatArches {
		s.Architectures = append(s.Architectures, a.compat...)
	}
	for _, grp := range g.Syscalls.Groups {
		for _, r := range grp.Rules {
			sc := specs.LinuxSyscall{Names: append([]string{}, r.Names...), Action: specs.ActAllow}
			if grp.Action != "allow" {
				errno := grp.Errno
				sc.Action, sc.ErrnoRet = specs.ActErrno, &errno
			}
			for _, arg := range r.Args {
				op, ok := ops[arg.Op]
				if !ok {
					return nil, errcode.Errorf(errcode.CompileError, "group %s: unknown operator %q", grp.Name, arg.Op)
				}
				sc.Args = append(sc.Args, specs.LinuxSeccompArg{Index: arg.Index, Value: arg.Value, ValueTwo: arg.ValueTwo, Op: op})
			}
			s.Syscalls = append(s.Syscalls, sc)
		}
	}
	return s, nil
}
