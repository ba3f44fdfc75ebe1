// Command sbxrun is an OCI runtime that enforces sandbox tiers, a policy
// compiler and spec linter, and a seatbelt profile generator. Each verb
// lives in its own file; this file holds the global flags, the paths they
// resolve to, and the single place where an error is printed.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
)

// version is set by the Makefile (-ldflags -X main.version=...).
var version = "dev"

// stdout is where verbs print results.
var stdout io.Writer = os.Stdout

func main() {
	app := newApp()
	err := app.Run(os.Args)
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.status)
	}
	if err != nil {
		printError(os.Stderr, globalArg(os.Args, "log-format", "text"), err)
		// containerd's shim reads the runtime's error from --log.
		if p := globalArg(os.Args, "log", ""); p != "" {
			if f, ferr := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); ferr == nil {
				printError(f, globalArg(os.Args, "log-format", "text"), err)
				f.Close()
			}
		}
		os.Exit(exitStatus(err))
	}
}

func newApp() *cli.App {
	app := &cli.App{
		Name:    "sbxrun",
		Usage:   "an OCI runtime that enforces sandbox tiers; compiles tiers into OCI specs and seatbelt profiles, lints specs, audits every decision",
		Version: version,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "runtime state directory", Value: defaultRoot(), EnvVars: []string{"SBXRUN_ROOT"}},
			&cli.StringFlag{Name: "state-dir", Usage: "persistent state: connector bindings and the audit log", Value: defaultStateDir(), EnvVars: []string{"SBXRUN_STATE_DIR"}},
			&cli.StringFlag{Name: "config-dir", Usage: "system configuration: override token store", Value: defaultConfigDir(), EnvVars: []string{"SBXRUN_CONFIG_DIR"}},
			&cli.StringFlag{Name: "audit-log", Usage: "audit log file (default <state-dir>/audit.jsonl)", EnvVars: []string{"SBXRUN_AUDIT_LOG"}},
			&cli.StringFlag{Name: "log", Usage: "write diagnostics to this file instead of stderr"},
			&cli.StringFlag{Name: "log-format", Usage: "diagnostic and error format: text or json", Value: "text"},
			&cli.BoolFlag{Name: "debug", Usage: "enable debug diagnostics"},
			&cli.BoolFlag{Name: "systemd-cgroup", Usage: "not supported: sbxrun manages cgroups itself; refused when set"},
			&cli.StringFlag{Name: "criu", Usage: "accepted for runc compatibility; checkpointing is not supported", Hidden: true},
			&cli.StringFlag{Name: "rootless", Usage: "accepted for runc compatibility (rootless mode is detected from the euid)", Hidden: true},
		},
		Before: setupLogging,
		Commands: []*cli.Command{
			specCommand(),
			lintCommand(),
			explainCommand(),
			profilesCommand(),
			bindCommand(),
			overrideCommand(),
			logCommand(),
			createCommand(),
			startCommand(),
			runCommand(),
			execCommand(),
			stateCommand(),
			killCommand(),
			deleteCommand(),
			listCommand(),
			psCommand(),
			pauseCommand(),
			resumeCommand(),
			eventsCommand(),
			updateCommand(),
			featuresCommand(),
			seatbeltCommand(),
			hookCommand(),
		},
		// Errors are printed once, by main; urfave/cli must not print or exit.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
	}
	var setUsage func([]*cli.Command)
	setUsage = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.OnUsageError = usageError
			setUsage(c.Subcommands)
		}
	}
	setUsage(app.Commands)
	return app
}

// usageError gives bad flags the same coded, one-line treatment as any
// other bad input.
func usageError(_ *cli.Context, err error, _ bool) error {
	return errcode.Errorf(errcode.ConfigInvalid, "%v", err)
}

func setupLogging(c *cli.Context) error {
	if c.Bool("systemd-cgroup") {
		return errcode.Errorf(errcode.ConfigInvalid, "--systemd-cgroup is not supported: sbxrun drives cgroupfs directly; configure the engine's cgroup manager as cgroupfs")
	}
	switch c.String("log-format") {
	case "text", "json":
	default:
		return errcode.Errorf(errcode.ConfigInvalid, "--log-format must be text or json, not %q", c.String("log-format"))
	}
	var w io.Writer = os.Stderr
	if p := c.String("log"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("opening --log %s: %w", p, err)
		}
		w = f
	}
	level := slog.LevelWarn
	if c.Bool("debug") {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.String("log-format") == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// globalArg finds a global flag's value in argv, for printing errors that
// happen before or during flag parsing.
func globalArg(args []string, name, def string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return def
}

func printError(w io.Writer, format string, err error) {
	code := errcode.Of(err)
	var pe *errcode.Error
	msg, details := err.Error(), []string(nil)
	if errors.As(err, &pe) {
		msg, details = pe.Msg, pe.Details
	}
	if format == "json" {
		b, _ := json.Marshal(struct {
			Level   string   `json:"level"`
			Code    string   `json:"code"`
			Msg     string   `json:"msg"`
			Details []string `json:"details,omitempty"`
		}{"error", string(code), msg, details})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintf(w, "sbxrun: %s: %s\n", code, msg)
	for _, d := range details {
		fmt.Fprintf(w, "  - %s\n", d)
	}
}

func exitStatus(err error) int {
	return errcode.Of(err).ExitStatus()
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

func xdg(env, fallback string) string {
	if v := os.Getenv(env); v != "" && filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(homeDir(), fallback)
}

func defaultRoot() string {
	if os.Geteuid() == 0 {
		return "/run/sbxrun"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sbxrun")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("sbxrun-%d", os.Geteuid()))
}

func defaultStateDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/sbxrun"
	}
	return filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "sbxrun")
}

func defaultConfigDir() string {
	if os.Geteuid() == 0 {
		return "/etc/sbxrun"
	}
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "sbxrun")
}
