package seatbelt

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/policy"
)

// fakeFS is a macOS-shaped file system for canonicalisation: the paths
// that exist and the symlinks among them.
type fakeFS struct {
	exists map[string]bool
	links  map[string]string
}

func newFakeFS(links map[string]string, paths ...string) fakeFS {
	f := fakeFS{exists: map[string]bool{"/": true}, links: links}
	for l, target := range links {
		paths = append(paths, l, target)
	}
	for _, p := range paths {
		for ; p != "/"; p = path.Dir(p) {
			f.exists[p] = true
		}
	}
	return f
}

// resolve behaves like filepath.EvalSymlinks on this file system.
func (f fakeFS) resolve(p string) (string, error) {
	out := "/"
	for _, c := range strings.Split(p, "/") {
		if c == "" {
			continue
		}
		next := path.Join(out, c)
		for hops := 0; ; hops++ {
			t, ok := f.links[next]
			if !ok {
				break
			}
			if hops > 40 {
				return "", fmt.Errorf("too many links at %s", next)
			}
			next = t
		}
		if !f.exists[next] {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: fs.ErrNotExist}
		}
		out = next
	}
	return out, nil
}

// testFS is a Mac with the usual /private links, a home whose .config is
// a symlink into a dotfiles repository, and a project.
var testFS = newFakeFS(map[string]string{
	"/tmp":                      "/private/tmp",
	"/var":                      "/private/var",
	"/etc":                      "/private/etc",
	"/Users/test/.config":       "/Users/test/dotfiles/config",
	"/opt/homebrew/bin/python3": "/opt/homebrew/Cellar/python/3.12/bin/python3.12",
}, "/Users/test/src/proj/.git", "/Users/test/data/out", "/private/var/folders/xy/T",
	"/bin/sh", "/opt/homebrew/Cellar/python/3.12/bin/python3.12")

func testLookPath(name, pathEnv string) (string, error) {
	if name == "python3" {
		return "/opt/homebrew/bin/python3", nil
	}
	return "/bin/" + name, nil
}

func testOptions(preset Preset) Options {
	return Options{
		ProjectRoot: "/Users/test/src/proj",
		Home:        "/Users/test",
		TmpDir:      "/var/folders/xy/T",
		Preset:      preset,
		Tag:         "sbxrun-test",
		ProxyPort:   3128,
		Resolve:     testFS.resolve,
		LookPath:    testLookPath,
	}
}

// knownSyscalls accepts every name: these tests exercise the seatbelt
// backend, not syscall tables (and must not need cgo).
type knownSyscalls struct{}

func (knownSyscalls) Known(name, arch string) (bool, error) { return true, nil }

func testFacts() policy.HostFacts {
	return policy.HostFacts{
		Arch:         "arm64",
		UID:          501,
		GID:          20,
		CgroupLimits: true,
		LandlockABI:  7,
		Syscalls:     knownSyscalls{},
		Env: map[string]string{
			"PATH": "/usr/bin:/bin", "HOME": "/Users/test", "LANG": "en_US.UTF-8", "TERM": "xterm-256color",
			"AWS_SECRET_ACCESS_KEY": "do-not-pass", "GITHUB_TOKEN": "do-not-pass", "NODE_ENV": "test",
		},
	}
}

func compile(t testing.TB, tier string, cfg *policy.Config) *policy.Grants {
	t.Helper()
	g, err := policy.Compile(tier, cfg, testFacts(), nil)
	if err != nil {
		t.Fatalf("compile %s: %v", tier, err)
	}
	return g
}

func generate(t testing.TB, tier string, cfg *policy.Config, opts Options) *Profile {
	t.Helper()
	p, err := Generate(compile(t, tier, cfg), opts)
	if err != nil {
		t.Fatalf("generate %s: %v", tier, err)
	}
	return p
}
