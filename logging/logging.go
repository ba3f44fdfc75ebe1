// Package logging is sbxrun's one diagnostic path. It builds the log/slog
// logger that every package writes warnings and debug messages to, and
// routes libcontainer's logrus output (including the logs its container
// init forwards) into the same logger, so `--log`, `--log-format` and
// `--debug` govern everything sbxrun prints besides results.
//
// The text format is for people: "sbxrun: warning: …" lines. The JSON
// format is logrus's ({"level":"warning","msg":…,"time":…}), which is what
// containerd's shim and podman parse from a runtime's --log file.
package logging

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
)

// Formats.
const (
	Text = "text"
	JSON = "json"
)

// Options configure the logger.
type Options struct {
	// Path is a file to append to instead of stderr.
	Path string
	// Format is Text or JSON.
	Format string
	// Debug enables debug messages (sbxrun's and libcontainer's).
	Debug bool
}

// Logger is the configured diagnostic logger.
type Logger struct {
	*slog.Logger
	opts Options
	file *os.File
}

// Setup builds the logger for o, makes it slog's default and routes
// libcontainer's logrus into it.
func Setup(o Options) (*Logger, error) {
	if o.Format == "" {
		o.Format = Text
	}
	if o.Format != Text && o.Format != JSON {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "--log-format must be %s or %s, not %q", Text, JSON, o.Format)
	}
	l := &Logger{opts: o}
	var w io.Writer = os.Stderr
	if o.Path != "" {
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, errcode.Errorf(errcode.ConfigInvalid, "opening --log %s: %v", o.Path, err)
		}
		l.file, w = f, f
	}
	level := slog.LevelWarn
	if o.Debug {
		level = slog.LevelDebug
	}
	l.Logger = slog.New(NewHandler(w, o.Format, level))
	slog.SetDefault(l.Logger)
	bridgeLogrus(l.Logger, o.Debug)
	return l, nil
}

// Close closes the log file, if any. A nil Logger has nothing to close.
func (l *Logger) Close() error {
	if l != nil && l.file != nil {
		return l.file.Close()
	}
	return nil
}

// Fatal reports the error a command ends with, once: on stderr, and also
// in the --log file where there is one (containerd's shim reads a runtime's
// last error there).
func (l *Logger) Fatal(err error) {
	if l.file != nil {
		writeError(l.file, l.opts.Format, err)
	}
	writeError(os.Stderr, l.opts.Format, err)
}

// FatalBeforeSetup reports an error that happened before the logger could
// be set up (a bad flag), in the format argv asked for.
func FatalBeforeSetup(format string, err error) {
	writeError(os.Stderr, format, err)
}

func writeError(w io.Writer, format string, err error) {
	code, msg, details := errcode.Of(err), errcode.Message(err), errcode.DetailsOf(err)
	if format == JSON {
		b, _ := json.Marshal(struct {
			Level   string   `json:"level"`
			Code    string   `json:"code"`
			Msg     string   `json:"msg"`
			Details []string `json:"details,omitempty"`
			Time    string   `json:"time"`
		}{"error", string(code), msg, details, time.Now().UTC().Format(time.RFC3339Nano)})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintf(w, "sbxrun: %s: %s\n", code, msg)
	for _, d := range details {
		fmt.Fprintf(w, "  - %s\n", d)
	}
}

// Handler writes records as sbxrun's text lines or logrus-style JSON.
type Handler struct {
	mu     *sync.Mutex
	w      io.Writer
	format string
	level  slog.Level
	attrs  []slog.Attr
}

// NewHandler returns a handler writing to w in format at level and above.
func NewHandler(w io.Writer, format string, level slog.Level) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, format: format, level: level}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

// WithGroup implements slog.Handler; groups are flattened.
func (h *Handler) WithGroup(string) slog.Handler { return h }

// levelName is logrus's name for a level.
func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}

// Handle implements slog.Handler.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]slog.Attr{}, h.attrs...)
	r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
	var line []byte
	if h.format == JSON {
		m := map[string]any{"level": levelName(r.Level), "msg": r.Message, "time": r.Time.UTC().Format(time.RFC3339Nano)}
		for _, a := range attrs {
			m[a.Key] = a.Value.Resolve().Any()
			if err, ok := m[a.Key].(error); ok {
				m[a.Key] = err.Error()
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		line = append(b, '\n')
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "sbxrun: %s: %s", levelName(r.Level), r.Message)
		for _, a := range attrs {
			fmt.Fprintf(&b, " %s=%s", a.Key, quote(a.Value.Resolve().String()))
		}
		b.WriteByte('\n')
		line = []byte(b.String())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(line)
	return err
}

func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
