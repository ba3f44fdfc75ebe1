// Command sbxrun is an OCI runtime that enforces sandbox tiers, a policy
// compiler and spec linter, and a seatbelt profile generator. Each verb
// lives in its own file and is thin: it parses flags, calls one engine
// method and prints. This file holds the global flags, the logger and the
// single place where an error is printed.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/logging"
	"github.com/sbxrun/sbxrun/specgen"
)

// version is set by the Makefile (-ldflags -X main.version=...).
var version = "dev"

// stdout is where verbs print results.
var stdout io.Writer = os.Stdout

// exitError carries a process's exit status out of run, exec and
// seatbelt run without printing anything.
type exitError struct{ status int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

func exitStatus(status int, err error) error {
	if err != nil {
		return err
	}
	if status != 0 {
		return exitError{status}
	}
	return nil
}

func main() {
	app := newApp()
	err := app.Run(os.Args)
	l, _ := app.Metadata["logger"].(*logging.Logger)
	os.Exit(report(l, err))
}

// report prints err once and returns the exit status: a process's own
// status for run and exec, else the status of err's code.
func report(l *logging.Logger, err error) int {
	defer l.Close()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.status
	case l != nil:
		l.Fatal(err)
	default:
		logging.FatalBeforeSetup(globalArg(os.Args, "log-format", logging.Text), err)
	}
	return errcode.Of(err).ExitStatus()
}

func newApp() *cli.App {
	def := engine.DefaultOptions()
	app := &cli.App{
		Name:    "sbxrun",
		Usage:   "an OCI runtime that enforces sandbox tiers; compiles tiers into OCI specs and seatbelt profiles, lints specs, audits every decision",
		Version: version,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "runtime state directory", Value: def.Root, EnvVars: []string{"SBXRUN_ROOT"}},
			&cli.StringFlag{Name: "state-dir", Usage: "persistent state: connector bindings and the audit log", Value: def.StateDir, EnvVars: []string{"SBXRUN_STATE_DIR"}},
			&cli.StringFlag{Name: "config-dir", Usage: "system configuration: runtime.yaml and the override token store", Value: def.ConfigDir, EnvVars: []string{"SBXRUN_CONFIG_DIR"}},
			&cli.StringFlag{Name: "audit-log", Usage: "audit log file (default <state-dir>/audit.jsonl)", EnvVars: []string{"SBXRUN_AUDIT_LOG"}},
			&cli.StringFlag{Name: "log", Usage: "write diagnostics (and the final error) to this file instead of stderr"},
			&cli.StringFlag{Name: "log-format", Usage: "diagnostic and error format: text or json", Value: logging.Text},
			&cli.BoolFlag{Name: "debug", Usage: "print debug diagnostics: sbxrun's decisions and libcontainer's (container init included)"},
			&cli.BoolFlag{Name: "systemd-cgroup", Usage: "not supported: sbxrun manages cgroups itself; refused when set"},
			&cli.StringFlag{Name: "criu", Usage: "accepted for runc compatibility; checkpointing is not supported", Hidden: true},
			&cli.StringFlag{Name: "rootless", Usage: "accepted for runc compatibility (rootless mode is detected from the euid)", Hidden: true},
		},
		Before: setup,
		Commands: []*cli.Command{
			specCommand(), lintCommand(), explainCommand(), profilesCommand(), bindCommand(),
			overrideCommand(), logCommand(), createCommand(), startCommand(), runCommand(),
			execCommand(), stateCommand(), killCommand(), deleteCommand(), listCommand(),
			psCommand(), pauseCommand(), resumeCommand(), eventsCommand(), updateCommand(),
			featuresCommand(), seatbeltCommand(), hookCommand(),
		},
		// Errors are printed once, by main; urfave/cli must not print or exit.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return errcode.Errorf(errcode.ConfigInvalid, "unknown command %q (see sbxrun --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Metadata: map[string]any{},
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

// setup configures the one logger and the engine every verb uses.
func setup(c *cli.Context) error {
	l, err := logging.Setup(logging.Options{Path: c.String("log"), Format: c.String("log-format"), Debug: c.Bool("debug")})
	if err != nil {
		return err
	}
	c.App.Metadata["logger"] = l
	if c.Bool("systemd-cgroup") {
		return errcode.Errorf(errcode.ConfigInvalid, "--systemd-cgroup is not supported: sbxrun drives cgroupfs directly; configure the engine's cgroup manager as cgroupfs")
	}
	c.App.Metadata["engine"] = engine.New(engine.Options{Root: c.String("root"), StateDir: c.String("state-dir"),
		ConfigDir: c.String("config-dir"), AuditLog: c.String("audit-log"), Logger: l.Logger})
	return nil
}

// eng is the engine setup made for this invocation.
func eng(c *cli.Context) *engine.Engine { return c.App.Metadata["engine"].(*engine.Engine) }

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

// oneID returns the single container id a verb takes.
func oneID(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", errcode.Errorf(errcode.ConfigInvalid, "%s takes exactly one container id", c.Command.Name)
	}
	return c.Args().First(), nil
}

// printJSON prints v as indented JSON.
func printJSON(v any) error {
	data, err := specgen.Marshal(v)
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}
