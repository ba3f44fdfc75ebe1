package logging

import (
	"context"
	"log/slog"
	"sort"

	"github.com/sirupsen/logrus"
)

// bridgeLogrus sends logrus entries (libcontainer's own, and those its
// container init forwards through the log pipe) to l, at their level and
// with their fields, and nowhere else.
func bridgeLogrus(l *slog.Logger, debug bool) {
	logrus.SetOutput(discard{})
	logrus.SetFormatter(nopFormatter{})
	logrus.StandardLogger().ReplaceHooks(logrus.LevelHooks{})
	logrus.AddHook(&hook{l: l})
	// The level is also what libcontainer passes to its init
	// (_LIBCONTAINER_LOGLEVEL), so the init logs no more than is shown.
	logrus.SetLevel(logrus.WarnLevel)
	if debug {
		logrus.SetLevel(logrus.DebugLevel)
	}
}

type hook struct{ l *slog.Logger }

func (h *hook) Levels() []logrus.Level { return logrus.AllLevels }

func (h *hook) Fire(e *logrus.Entry) error {
	level := slog.LevelDebug
	switch {
	case e.Level <= logrus.ErrorLevel:
		level = slog.LevelError
	case e.Level == logrus.WarnLevel:
		level = slog.LevelWarn
	case e.Level == logrus.InfoLevel:
		level = slog.LevelInfo
	}
	attrs := make([]any, 0, 2*len(e.Data)+2)
	attrs = append(attrs, "source", "libcontainer")
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, k, e.Data[k])
	}
	h.l.Log(context.Background(), level, e.Message, attrs...)
	return nil
}

type nopFormatter struct{}

func (nopFormatter) Format(*logrus.Entry) ([]byte, error) { return nil, nil }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
