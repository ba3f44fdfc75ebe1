package specgen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

var update = flag.Bool("update", false, "rewrite golden files and artifacts")

var arches = []string{"amd64", "arm64"}

// artifactPath is the committed compiled-output artifact: an index of every
// tier's compiled grants, spec and seccomp profile, by hash (see its README).
const artifactPath = "../artifacts/bd-3ua7/sandbox_profile_compiler_output.json"

type compiled struct {
	grants, spec, seccomp []byte
}

func compileTier(t testing.TB, tier, arch string) compiled {
	t.Helper()
	g, err := policy.Compile(tier, nil, policy.ReferenceFacts(arch, host.Syscalls()), nil)
	if err != nil {
		t.Fatalf("%s/%s: %v", tier, arch, err)
	}
	s, err := specgen.Generate(g, specgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := specgen.Seccomp(g)
	if err != nil {
		t.Fatal(err)
	}
	var c compiled
	for _, p := range []struct {
		dst *[]byte
		v   any
	}{{&c.grants, g}, {&c.spec, s}, {&c.seccomp, sc}} {
		if *p.dst, err = specgen.Marshal(p.v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./specgen -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s drifted from the compiler; review and run go test ./specgen -update", path)
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestGoldenAndArtifacts(t *testing.T) {
	type entry struct {
		Grants  string `json:"grants_sha256"`
		Spec    string `json:"spec_sha256"`
		Seccomp string `json:"seccomp_sha256"`
		Files   string `json:"files"`
	}
	index := map[string]map[string]entry{}
	for _, tier := range profiles.Builtin().Names() {
		index[tier] = map[string]entry{}
		for _, arch := range arches {
			c := compileTier(t, tier, arch)
			base := tier + "." + arch
			golden(t, base+".grants.json", c.grants)
			golden(t, base+".oci.json", c.spec)
			golden(t, base+".seccomp.json", c.seccomp)
			index[tier][arch] = entry{sum(c.grants), sum(c.spec), sum(c.seccomp), "specgen/testdata/" + base + ".{grants,oci,seccomp}.json"}
		}
	}
	art, err := specgen.Marshal(struct {
		Contract string                      `json:"contract"`
		Host     string                      `json:"host"`
		Tiers    map[string]map[string]entry `json:"tiers"`
	}{"bd-3ua7", "policy.ReferenceFacts", index})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(artifactPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(artifactPath, art, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(artifactPath)
	if err != nil || !bytes.Equal(want, art) {
		t.Errorf("%s drifted from the compiler (%v); run go test ./specgen -update", artifactPath, err)
	}
}

// TestByteIdenticalAcrossRuns is the determinism invariant at the artifact level.
func TestByteIdenticalAcrossRuns(t *testing.T) {
	for _, tier := range profiles.Builtin().Names() {
		a, b := compileTier(t, tier, "amd64"), compileTier(t, tier, "amd64")
		if !bytes.Equal(a.spec, b.spec) || !bytes.Equal(a.grants, b.grants) {
			t.Errorf("%s: two compilations differ", tier)
		}
	}
}

func TestSpecShape(t *testing.T) {
	g, err := policy.Compile("strict", nil, policy.ReferenceFacts("arm64", host.Syscalls()), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := specgen.Generate(g, specgen.Options{RootPath: "/abs/rootfs"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Root.Path != "/abs/rootfs" || !s.Root.Readonly || !s.Process.NoNewPrivileges || len(s.Process.Capabilities.Bounding) != 0 {
		t.Errorf("strict spec basics wrong: %+v %+v", s.Root, s.Process)
	}
	if a := s.Linux.Seccomp.Architectures; len(a) != 1 || a[0] != "SCMP_ARCH_AARCH64" {
		t.Errorf("arm64 strict architectures = %v", a)
	}
	if *s.Linux.Seccomp.DefaultErrnoRet != 38 {
		t.Errorf("default errno = %d, want ENOSYS", *s.Linux.Seccomp.DefaultErrnoRet)
	}
	if s.Annotations[specgen.AnnotationTier] != "strict" || s.Annotations[specgen.AnnotationExec] != "initial-only" {
		t.Errorf("annotations: %v", s.Annotations)
	}
	mod, _ := policy.Compile("moderate", nil, policy.ReferenceFacts("amd64", host.Syscalls()), nil)
	ms, _ := specgen.Generate(mod, specgen.Options{})
	if a := ms.Linux.Seccomp.Architectures; len(a) != 3 {
		t.Errorf("moderate amd64 architectures = %v, want native + x86 + x32", a)
	}
}

func BenchmarkCompileToSpec(b *testing.B) {
	f := policy.ReferenceFacts("amd64", host.Syscalls())
	for i := 0; i < b.N; i++ {
		g, err := policy.Compile("strict", nil, f, nil)
		if err != nil {
			b.Fatal(err)
		}
		s, err := specgen.Generate(g, specgen.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := specgen.Marshal(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStrictPlusSpecSaysRunscIsUnused: the spec carries the backend only
// as a not-enforced note, never as an annotation that claims it is used,
// and masks /proc/sys entries without masking /proc/sys itself.
func TestStrictPlusSpecSaysRunscIsUnused(t *testing.T) {
	g, err := policy.Compile("strict_plus", nil, policy.ReferenceFacts("amd64", host.Syscalls()), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := specgen.Generate(g, specgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Annotations[specgen.AnnotationUnenforced], "hardened_backend=runsc: not used") {
		t.Errorf("unenforced annotation: %q", s.Annotations[specgen.AnnotationUnenforced])
	}
	for k := range s.Annotations {
		if strings.Contains(k, "backend") {
			t.Errorf("annotation %s claims a backend", k)
		}
	}
	masked := strings.Join(s.Linux.MaskedPaths, " ") + " "
	if strings.Contains(masked, "/proc/sys ") || !strings.Contains(masked, "/proc/sys/vm ") || !strings.Contains(masked, "/proc/sys/kernel/kptr_restrict ") {
		t.Errorf("strict_plus masked paths: %v", s.Linux.MaskedPaths)
	}
}
