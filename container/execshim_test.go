//go:build linux && cgo

package container

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func interpOf(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			buf := make([]byte, p.Filesz)
			p.ReadAt(buf, 0)
			return string(buf[:len(buf)-1])
		}
	}
	return ""
}

// executables must name everything the kernel opens to run a program:
// the program, a #! interpreter, and an ELF program interpreter, since
// Landlock checks execute rights on each of them.
func TestExecutables(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sh}
	if interp := interpOf(t, sh); interp != "" {
		want = append(want, interp)
	}
	got, err := executables(sh, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("executables(%s) = %v, %v; want %v", sh, got, err, want)
	}
	script := filepath.Join(t.TempDir(), "s")
	os.WriteFile(script, []byte("#!"+sh+" -e\necho hi\n"), 0o755)
	got, err = executables(script, 0)
	if err != nil || !reflect.DeepEqual(got, append([]string{script}, want...)) {
		t.Errorf("script: %v, %v", got, err)
	}
	loop := filepath.Join(t.TempDir(), "loop")
	os.WriteFile(loop, []byte("#!"+loop+"\n"), 0o755)
	if _, err := executables(loop, 0); err == nil {
		t.Error("a #! loop was accepted")
	}
	rel := filepath.Join(t.TempDir(), "rel")
	os.WriteFile(rel, []byte("#!sh\n"), 0o755)
	if _, err := executables(rel, 0); err == nil {
		t.Error("a relative #! interpreter was accepted")
	}
}
