package seatbelt

import (
	"errors"
	"io/fs"
	"regexp"
	"testing"
)

func TestCanonicalPath(t *testing.T) {
	c := canonicaliser{home: "/Users/test", resolve: testFS.resolve}
	for in, want := range map[string]string{
		"/tmp/x":                           "/private/tmp/x",
		"/tmp":                             "/private/tmp",
		"/var/folders/xy/T/run":            "/private/var/folders/xy/T/run",
		"/etc/hosts":                       "/private/etc/hosts",
		"~":                                "/Users/test",
		"~/src/proj":                       "/Users/test/src/proj",
		"/Users/test/.config/sbxrun":       "/Users/test/dotfiles/config/sbxrun",
		"/Users/test/.config/a/b/missing":  "/Users/test/dotfiles/config/a/b/missing",
		"/Users/test/src/proj/../proj/":    "/Users/test/src/proj",
		"/opt/homebrew/bin/python3":        "/opt/homebrew/Cellar/python/3.12/bin/python3.12",
		"/Users/test/src/a\") (allow x \"": "/Users/test/src/a\") (allow x \"",
		"/tmpfoo":                          "/tmpfoo",
	} {
		got, err := c.path(in)
		if err != nil || got != want {
			t.Errorf("path(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCanonicalPathRefuses(t *testing.T) {
	loop := newFakeFS(map[string]string{"/a": "/b", "/b": "/a"})
	denied := func(string) (string, error) { return "", fs.ErrPermission }
	for name, c := range map[string]struct {
		resolve Resolver
		home    string
		path    string
	}{
		"control character":    {testFS.resolve, "/Users/test", "/Users/test/a\nb"},
		"~user":                {testFS.resolve, "/Users/test", "~root/.ssh"},
		"~ without home":       {testFS.resolve, "", "~/x"},
		"empty":                {testFS.resolve, "/Users/test", ""},
		"symlink loop":         {loop.resolve, "/", "/a/x"},
		"resolver failure":     {denied, "/", "/Users/x"},
		"longer than PATH_MAX": {testFS.resolve, "/", "/" + string(make([]byte, 0)) + string(bytesOf('a', maxPath+1))},
	} {
		if got, err := (canonicaliser{home: c.home, resolve: c.resolve}).path(c.path); err == nil {
			t.Errorf("%s: path(%q) = %q, want an error", name, c.path, got)
		}
	}
	if _, err := (canonicaliser{resolve: denied}).path("/x"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a resolver error is not passed on: %v", err)
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestAncestorRegex(t *testing.T) {
	re, err := ancestorRegex([]string{"/Users/a.b/src/proj", "/private/tmp/run", "/Users/a.b/.ssh"})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRegex(re); err != nil {
		t.Fatal(err)
	}
	rx := regexp.MustCompile(re)
	for p, want := range map[string]bool{
		"/Users": true, "/Users/a.b": true, "/Users/a.b/src": true, "/private": true, "/private/tmp": true,
		"/": false, "/Users/a.b/src/proj": false, "/Users/aXb": false, "/Users/a.b/srcx": false, "/private/tmp/run": false,
	} {
		if rx.MatchString(p) != want {
			t.Errorf("%s: got %v", p, !want)
		}
	}
	if _, err := ancestorRegex([]string{"/top"}); err == nil {
		t.Error("no ancestors gave a regex")
	}
}
