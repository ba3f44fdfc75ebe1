package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sbxrun/sbxrun/errcode"
)

func TestTextAndJSONFormats(t *testing.T) {
	var text, js bytes.Buffer
	slog.New(NewHandler(&text, Text, slog.LevelWarn)).Warn("not enforced: x", "what", "memory limit", "n", 3)
	if got := text.String(); got != "sbxrun: warning: not enforced: x what=\"memory limit\" n=3\n" {
		t.Errorf("text: %q", got)
	}
	l := slog.New(NewHandler(&js, JSON, slog.LevelWarn))
	l.Debug("hidden")
	l.Error("boom", "err", errors.New("bad"))
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil || m["level"] != "error" || m["msg"] != "boom" || m["err"] != "bad" || m["time"] == nil {
		t.Errorf("json (logrus field names and level words, one object): %q %v", js.String(), err)
	}
}

// TestLogrusRoutedIntoTheOneLogger: libcontainer logs through logrus; its
// entries come out of sbxrun's logger in sbxrun's format and level, and
// nowhere else.
func TestLogrusRoutedIntoTheOneLogger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l, err := Setup(Options{Path: path, Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	logrus.WithField("pid", 7).Warn("from libcontainer")
	logrus.Debug("too verbose")
	slog.Warn("from sbxrun")
	l.Fatal(errcode.Errorf(errcode.SpecInvalid, "bad spec"))
	l.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines (libcontainer warning, sbxrun warning, error), got:\n%s", data)
	}
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[2]), &last)
	if first["level"] != "warning" || first["msg"] != "from libcontainer" || first["pid"] != float64(7) || first["source"] != "libcontainer" {
		t.Errorf("logrus entry: %v", first)
	}
	if last["level"] != "error" || last["code"] != "SANDBOX_SPEC_INVALID" || last["msg"] != "bad spec" {
		t.Errorf("final error: %v", last)
	}
	if logrus.GetLevel() != logrus.WarnLevel {
		t.Errorf("logrus level %v: libcontainer's init would log more than is shown", logrus.GetLevel())
	}
	if _, err := Setup(Options{Format: Text, Debug: true}); err != nil || logrus.GetLevel() != logrus.DebugLevel {
		t.Errorf("--debug must raise libcontainer's level too: %v", logrus.GetLevel())
	}
	if _, err := Setup(Options{Format: "xml"}); errcode.Of(err) != errcode.ConfigInvalid {
		t.Errorf("bad format: %v", err)
	}
}
