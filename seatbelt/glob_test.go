package seatbelt

import (
	"math/rand/v2"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// samplePaths builds absolute and relative paths from names that the
// sensitive globs are about and names that only look similar.
func samplePaths() []string {
	names := []string{"Users", "test", "src", "proj", "a", "b", "x.y", ".env", ".env.local", ".envrc", "env",
		"prod.env", "x.pem", "pem", "a.key", "key", "keys", ".key", "my-credentials.json", "credentials", "Credentials",
		"secrets", "top_secret", "secret1.txt", "secre", ".aws", "aws", ".ssh", "id_rsa", ".gnupg", "gnupg",
		"node_modules", "lib", "ab", "abc", "a{b", "a*b", "[x]", "é.pem"}
	r := rand.New(rand.NewPCG(7, 11))
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, n := range names {
		add(n)
		add("/" + n)
		add("/Users/test/src/proj/" + n)
	}
	for i := 0; i < 3000; i++ {
		parts := make([]string, 1+r.IntN(5))
		for j := range parts {
			parts[j] = names[r.IntN(len(names))]
		}
		p := strings.Join(parts, "/")
		add(p)
		add("/" + p)
	}
	return append(out, "/", "a/", ".aws/", "/Users/test/src/proj/.ssh/", "a//.env")
}

// globsUnderTest are the default sensitive globs as configured and as
// denied, and globs that exercise every construct the translation knows.
func globsUnderTest() []string {
	var gs []string
	for _, g := range DefaultSensitiveGlobs {
		gs = append(gs, g, denyGlob(g))
	}
	for _, g := range []string{".env", "*.pem", ".aws/", "*secret*"} {
		gs = append(gs, g, denyGlob(g))
	}
	return append(gs,
		"**", "*", "**/*", "/**", "a/**", "**/a", "a/**/b", "a/**/**/b", "/Users/*/src/**/.env",
		"**/*.{pem,key}", "**/{.env,.env.*}", "**/a{b,{c,x.y}}", "**/id_[!.]*", "**/[a-c]b*", "**/secret?.txt",
		"**/x\\.y", "**/a\\*b", "**/a\\{b", "a**", "**b", "**/a**/b", "*/*", "?", "**/é.pem",
	)
}

// TestGlobRegexMatchesDoublestar proves that each glob's regex accepts and
// rejects exactly the paths doublestar.Match (the Linux backend's matcher)
// does: both backends deny the same files.
func TestGlobRegexMatchesDoublestar(t *testing.T) {
	paths := samplePaths()
	for _, g := range globsUnderTest() {
		re, err := globRegex(g)
		if err != nil {
			t.Errorf("globRegex(%q): %v", g, err)
			continue
		}
		if err := checkRegex(re); err != nil {
			t.Errorf("globRegex(%q) = %q, which Lint refuses: %v", g, re, err)
		}
		rx := regexp.MustCompile(re)
		matched := 0
		for _, p := range paths {
			want, err := doublestar.Match(g, p)
			if err != nil {
				t.Fatalf("doublestar.Match(%q): %v", g, err)
			}
			if got := rx.MatchString(p); got != want {
				t.Errorf("glob %q, regex %q, path %q: regex %v, doublestar %v", g, re, p, got, want)
			}
			if want {
				matched++
			}
		}
		if matched == 0 {
			t.Errorf("glob %q matches no sample path: the test proves nothing for it", g)
		}
	}
}

// TestDenyRegexCoversMatchesAndBelow: a deny regex matches a path exactly
// when doublestar matches the normalised glob against the path or one of
// its ancestors, the definition both backends can share.
func TestDenyRegexCoversMatchesAndBelow(t *testing.T) {
	for _, g := range append(DefaultSensitiveGlobs, "*.pem", ".aws/", "*secret*", "**/*.{pem,key}") {
		re, err := denyRegex(g)
		if err != nil {
			t.Fatal(err)
		}
		rx, norm := regexp.MustCompile(re), denyGlob(g)
		for _, p := range samplePaths() {
			want := false
			for a := p; ; a = path.Dir(a) {
				if ok, _ := doublestar.Match(norm, a); ok {
					want = true
				}
				if a == "/" || a == "." || path.Dir(a) == a {
					break
				}
			}
			if got := rx.MatchString(p); got != want {
				t.Errorf("glob %q, deny regex %q, path %q: regex %v, doublestar on the path or an ancestor %v", g, re, p, got, want)
			}
		}
	}
	for glob, want := range map[string]string{
		"*.pem": "**/*.pem", ".aws/": "**/.aws/**", "**/.env": "**/.env", "/abs/x": "/abs/x", "**": "**",
	} {
		if got := denyGlob(glob); got != want {
			t.Errorf("denyGlob(%q) = %q, want %q", glob, got, want)
		}
	}
}

func mustDenyRegex(t *testing.T, g string) string {
	t.Helper()
	re, err := denyRegex(g)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// TestEnvGlobAtAnyDepthUnderProject: **/.env is not anchored to one
// directory (srt #432).
func TestEnvGlobAtAnyDepthUnderProject(t *testing.T) {
	re := regexp.MustCompile(mustDenyRegex(t, "**/.env"))
	for p, want := range map[string]bool{
		"/Users/test/src/proj/.env":           true,
		"/Users/test/src/proj/a/b/c/.env":     true,
		"/Users/test/src/proj/.env/nested":    true,
		"/Users/test/src/proj/.envrc":         false,
		"/Users/test/src/proj/a/.env.example": false,
		"/Users/test/src/proj/not.env":        false,
	} {
		if re.MatchString(p) != want {
			t.Errorf("%s: got %v, want %v", p, !want, want)
		}
	}
}

func TestGlobRegexRefuses(t *testing.T) {
	for _, g := range []string{"", "a\"b", "a\nb", "[a/b]", "[[:alpha:]]", "[]", "[a", "{a,}", "{a,b", "**/{a/b,c}", "a\\", "[a\\]b]"} {
		if re, err := globRegex(g); err == nil {
			t.Errorf("globRegex(%q) = %q, want an error", g, re)
		}
	}
}

func TestSensitiveRegexesSortedAndDeduplicated(t *testing.T) {
	a, err := sensitiveRegexes([]string{"*.pem", "**/*.pem", ".env"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sensitiveRegexes([]string{".env", "**/*.pem"})
	if strings.Join(a, " ") != strings.Join(b, " ") || len(a) != 2 {
		t.Fatalf("%v vs %v", a, b)
	}
}
