//go:build linux && cgo

package container

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/sbxrun/sbxrun/errcode"
)

// leafFields lists the fields of t by Go path ("User.UID",
// "Rlimits[].Type"), descending into structs, pointers to structs and
// slices of structs, except into the paths in whole, which are leaves.
func leafFields(t reflect.Type, prefix string, whole map[string]bool) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		path := f.Name
		if prefix != "" {
			path = prefix + "." + f.Name
		}
		if f.Anonymous {
			path = prefix
		}
		ft := f.Type
		suffix := ""
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			ft, suffix = ft.Elem(), "[]"
		} else if ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct {
			ft, suffix = ft.Elem(), "[]"
		}
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !whole[path] {
			out = append(out, leafFields(ft, path+suffix, whole)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

// fillDistinct sets every settable leaf of v to a non-zero value, so a
// deep comparison after a copy proves each field was carried over.
func fillDistinct(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillDistinct(v.Elem(), n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillDistinct(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillDistinct(v.Index(0), n)
		fillDistinct(v.Index(1), n)
	case reflect.String:
		v.SetString("v" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Bool:
		v.SetBool(true)
	}
}

func baseProcess() *specs.Process {
	return &specs.Process{Args: []string{"/bin/true"}, Cwd: "/"}
}

func u32(v uint32) *uint32 { return &v }
func intp(v int) *int      { return &v }

// processConversions: how each field of specs.Process reaches the
// libcontainer process. set gives the field a distinctive value; check
// fails unless that value arrived.
var processConversions = map[string]struct {
	set   func(p *specs.Process)
	check func(lp *libcontainer.Process) bool
}{
	"ConsoleSize.Height": {func(p *specs.Process) { p.ConsoleSize = &specs.Box{Height: 33, Width: 1} },
		func(lp *libcontainer.Process) bool { return lp.ConsoleHeight == 33 }},
	"ConsoleSize.Width": {func(p *specs.Process) { p.ConsoleSize = &specs.Box{Height: 1, Width: 77} },
		func(lp *libcontainer.Process) bool { return lp.ConsoleWidth == 77 }},
	"User.UID": {func(p *specs.Process) { p.User.UID = 1234 }, func(lp *libcontainer.Process) bool { return lp.UID == 1234 }},
	"User.GID": {func(p *specs.Process) { p.User.GID = 4321 }, func(lp *libcontainer.Process) bool { return lp.GID == 4321 }},
	"User.AdditionalGids": {func(p *specs.Process) { p.User.AdditionalGids = []uint32{7, 8} },
		func(lp *libcontainer.Process) bool { return reflect.DeepEqual(lp.AdditionalGroups, []int{7, 8}) }},
	"Args": {func(p *specs.Process) { p.Args = []string{"/bin/x", "arg"} },
		func(lp *libcontainer.Process) bool { return reflect.DeepEqual(lp.Args, []string{"/bin/x", "arg"}) }},
	"Env": {func(p *specs.Process) { p.Env = []string{"A=1"} },
		func(lp *libcontainer.Process) bool { return reflect.DeepEqual(lp.Env, []string{"A=1"}) }},
	"Cwd": {func(p *specs.Process) { p.Cwd = "/work" }, func(lp *libcontainer.Process) bool { return lp.Cwd == "/work" }},
	"Capabilities.Bounding": {func(p *specs.Process) { p.Capabilities = &specs.LinuxCapabilities{Bounding: []string{"CAP_B"}} },
		func(lp *libcontainer.Process) bool {
			return reflect.DeepEqual(lp.Capabilities.Bounding, []string{"CAP_B"})
		}},
	"Capabilities.Effective": {func(p *specs.Process) { p.Capabilities = &specs.LinuxCapabilities{Effective: []string{"CAP_E"}} },
		func(lp *libcontainer.Process) bool {
			return reflect.DeepEqual(lp.Capabilities.Effective, []string{"CAP_E"})
		}},
	"Capabilities.Inheritable": {func(p *specs.Process) { p.Capabilities = &specs.LinuxCapabilities{Inheritable: []string{"CAP_I"}} },
		func(lp *libcontainer.Process) bool {
			return reflect.DeepEqual(lp.Capabilities.Inheritable, []string{"CAP_I"})
		}},
	"Capabilities.Permitted": {func(p *specs.Process) { p.Capabilities = &specs.LinuxCapabilities{Permitted: []string{"CAP_P"}} },
		func(lp *libcontainer.Process) bool {
			return reflect.DeepEqual(lp.Capabilities.Permitted, []string{"CAP_P"})
		}},
	"Capabilities.Ambient": {func(p *specs.Process) { p.Capabilities = &specs.LinuxCapabilities{Ambient: []string{"CAP_A"}} },
		func(lp *libcontainer.Process) bool {
			return reflect.DeepEqual(lp.Capabilities.Ambient, []string{"CAP_A"})
		}},
	"Rlimits[].Type": {func(p *specs.Process) { p.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE"}} },
		func(lp *libcontainer.Process) bool {
			return len(lp.Rlimits) == 1 && lp.Rlimits[0].Type == unix.RLIMIT_NOFILE
		}},
	"Rlimits[].Hard": {func(p *specs.Process) { p.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_CORE", Hard: 99}} },
		func(lp *libcontainer.Process) bool { return len(lp.Rlimits) == 1 && lp.Rlimits[0].Hard == 99 }},
	"Rlimits[].Soft": {func(p *specs.Process) { p.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_CORE", Soft: 98}} },
		func(lp *libcontainer.Process) bool { return len(lp.Rlimits) == 1 && lp.Rlimits[0].Soft == 98 }},
	"NoNewPrivileges": {func(p *specs.Process) { p.NoNewPrivileges = true },
		func(lp *libcontainer.Process) bool { return lp.NoNewPrivileges != nil && *lp.NoNewPrivileges }},
	"ApparmorProfile": {func(p *specs.Process) { p.ApparmorProfile = "aa-prof" },
		func(lp *libcontainer.Process) bool { return lp.AppArmorProfile == "aa-prof" }},
	"SelinuxLabel": {func(p *specs.Process) { p.SelinuxLabel = "se:label" },
		func(lp *libcontainer.Process) bool { return lp.Label == "se:label" }},
	// Whole structs that libcontainer takes as they are (its types are
	// aliases of the spec's): every field is filled and compared.
	"Scheduler": {func(p *specs.Process) {
		n := 0
		p.Scheduler = &specs.Scheduler{}
		fillDistinct(reflect.ValueOf(p.Scheduler).Elem(), &n)
	},
		func(lp *libcontainer.Process) bool {
			n, want := 0, &specs.Scheduler{}
			fillDistinct(reflect.ValueOf(want).Elem(), &n)
			return reflect.DeepEqual(lp.Scheduler, want)
		}},
	"IOPriority": {func(p *specs.Process) {
		n := 0
		p.IOPriority = &specs.LinuxIOPriority{}
		fillDistinct(reflect.ValueOf(p.IOPriority).Elem(), &n)
	},
		func(lp *libcontainer.Process) bool {
			n, want := 0, &specs.LinuxIOPriority{}
			fillDistinct(reflect.ValueOf(want).Elem(), &n)
			return reflect.DeepEqual(lp.IOPriority, want)
		}},
	"ExecCPUAffinity.Initial": {func(p *specs.Process) { p.ExecCPUAffinity = &specs.CPUAffinity{Initial: "1,3"} },
		func(lp *libcontainer.Process) bool {
			return lp.CPUAffinity != nil && lp.CPUAffinity.Initial != nil && cpus(lp.CPUAffinity.Initial) == "1,3"
		}},
	"ExecCPUAffinity.Final": {func(p *specs.Process) { p.ExecCPUAffinity = &specs.CPUAffinity{Final: "0-2"} },
		func(lp *libcontainer.Process) bool {
			return lp.CPUAffinity != nil && lp.CPUAffinity.Final != nil && cpus(lp.CPUAffinity.Final) == "0,1,2"
		}},
}

func cpus(s *unix.CPUSet) string {
	var out []string
	for i := 0; i < 1024; i++ {
		if s.IsSet(i) {
			out = append(out, strconv.Itoa(i))
		}
	}
	return strings.Join(out, ",")
}

// processHandledElsewhere: fields newProcess does not copy, and why.
// Those a process may not set on its own are checked by
// TestProcessFieldsRefused.
var processHandledElsewhere = map[string]string{
	"Terminal":      "stdio: foreground gives the process a pty, startDetached a console socket",
	"CommandLine":   "Windows-only: refused when set",
	"User.Username": "Windows-only: refused when set",
	"User.Umask":    "container config (specconv); libcontainer applies it to every process, so a process's own must match it or is refused",
	"OOMScoreAdj":   "container config (specconv); libcontainer applies it to every process, so a process's own must match it or is refused",
}

func wholeProcessStructs() map[string]bool {
	return map[string]bool{"Scheduler": true, "IOPriority": true}
}

// TestProcessConversionCoversEverySpecField: every field of specs.Process
// (walked by reflection, so a field added to the spec fails here until it
// is handled) is either converted — its distinctive value arrives in the
// libcontainer.Process, for the init and for exec — or listed as handled
// elsewhere with the reason.
func TestProcessConversionCoversEverySpecField(t *testing.T) {
	fields := leafFields(reflect.TypeOf(specs.Process{}), "", wholeProcessStructs())
	sort.Strings(fields)
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f] = true
		_, conv := processConversions[f]
		_, elsewhere := processHandledElsewhere[f]
		if conv == elsewhere {
			t.Errorf("specs.Process field %s: converted=%v, handled elsewhere=%v; it must be exactly one", f, conv, elsewhere)
		}
	}
	for f := range processConversions {
		if !seen[f] {
			t.Errorf("conversion table names %s, which specs.Process does not have", f)
		}
	}
	for f := range processHandledElsewhere {
		if !seen[f] {
			t.Errorf("handled-elsewhere table names %s, which specs.Process does not have", f)
		}
	}
	for f, c := range processConversions {
		for _, init := range []bool{true, false} {
			p := baseProcess()
			c.set(p)
			lp, err := newProcess(p, &configs.Config{}, init)
			if err != nil {
				t.Errorf("%s (init=%v): %v", f, init, err)
				continue
			}
			if !c.check(lp) {
				t.Errorf("%s (init=%v): the value did not reach the libcontainer process: %+v", f, init, lp)
			}
			if lp.Init != init {
				t.Errorf("%s: Init = %v, want %v", f, lp.Init, init)
			}
		}
	}
}

// Conversion must copy, not alias: the caller's spec may be reused.
func TestProcessConversionDoesNotAlias(t *testing.T) {
	p := baseProcess()
	p.Args = []string{"/a"}
	p.Scheduler = &specs.Scheduler{Policy: specs.SchedBatch, Flags: []specs.LinuxSchedulerFlag{specs.SchedFlagResetOnFork}}
	lp, err := newProcess(p, &configs.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	p.Args[0] = "/changed"
	p.Scheduler.Flags[0] = "changed"
	p.Scheduler.Policy = "changed"
	if lp.Args[0] != "/a" || lp.Scheduler.Flags[0] != specs.SchedFlagResetOnFork || lp.Scheduler.Policy != specs.SchedBatch {
		t.Errorf("converted process aliases the spec: %v %+v", lp.Args, lp.Scheduler)
	}
}

func TestProcessLogLevelFollowsLogrus(t *testing.T) {
	old := logrus.GetLevel()
	defer logrus.SetLevel(old)
	for _, lvl := range []logrus.Level{logrus.DebugLevel, logrus.WarnLevel} {
		logrus.SetLevel(lvl)
		lp, err := newProcess(baseProcess(), &configs.Config{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if lp.LogLevel != strconv.Itoa(int(lvl)) {
			t.Errorf("LogLevel = %q at logrus level %v", lp.LogLevel, lvl)
		}
	}
}

// TestProcessFieldsRefused: what libcontainer cannot apply to one process
// is refused with SpecInvalid naming the field; the matching value (or
// none) is accepted.
func TestProcessFieldsRefused(t *testing.T) {
	cfg := &configs.Config{Umask: u32(0o027), OomScoreAdj: intp(100)}
	cases := []struct {
		name  string
		set   func(p *specs.Process)
		field string // empty: accepted
	}{
		{"same umask", func(p *specs.Process) { p.User.Umask = u32(0o027) }, ""},
		{"no umask", func(p *specs.Process) {}, ""},
		{"other umask", func(p *specs.Process) { p.User.Umask = u32(0o022) }, "process.user.umask"},
		{"same oomScoreAdj", func(p *specs.Process) { p.OOMScoreAdj = intp(100) }, ""},
		{"other oomScoreAdj", func(p *specs.Process) { p.OOMScoreAdj = intp(-500) }, "process.oomScoreAdj"},
		{"commandLine", func(p *specs.Process) { p.CommandLine = "cmd.exe /c" }, "process.commandLine"},
		{"username", func(p *specs.Process) { p.User.Username = "bob" }, "process.user.username"},
		{"no args", func(p *specs.Process) { p.Args = nil }, "process.args"},
		{"relative cwd", func(p *specs.Process) { p.Cwd = "work" }, "process.cwd"},
		{"unknown rlimit", func(p *specs.Process) { p.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_BOGUS"}} }, "process.rlimits"},
		{"bad affinity", func(p *specs.Process) { p.ExecCPUAffinity = &specs.CPUAffinity{Initial: "x"} }, "process.execCPUAffinity"},
	}
	for _, tc := range cases {
		p := baseProcess()
		tc.set(p)
		_, err := newProcess(p, cfg, false)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.field != "" && (errcode.Of(err) != errcode.SpecInvalid || !strings.Contains(err.Error(), tc.field)):
			t.Errorf("%s: got %v, want %s naming %s", tc.name, err, errcode.SpecInvalid, tc.field)
		}
	}
	// A process's umask against a container without one is refused too.
	p := baseProcess()
	p.User.Umask = u32(0o077)
	if _, err := newProcess(p, &configs.Config{}, false); errcode.Of(err) != errcode.SpecInvalid {
		t.Errorf("umask against a container without one: %v", err)
	}
}
