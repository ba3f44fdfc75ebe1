package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
)

func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a process in a running container, under the container's tier",
		ArgsUsage: "CONTAINER-ID [COMMAND ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "process", Aliases: []string{"p"}, Usage: "process.json (OCI process) instead of COMMAND"},
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the process runs"},
			&cli.StringFlag{Name: "pid-file", Usage: "file to write the process's pid to"},
			&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the pty master"},
			&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "allocate a pseudo-terminal"},
			&cli.StringFlag{Name: "cwd", Usage: "working directory in the container"},
			&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "KEY=VALUE (repeat)"},
			&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "UID[:GID]"},
			&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many extra fds (3, 4, …)"},
		},
		Action: runExec,
	}
}

func runExec(c *cli.Context) error {
	if c.NArg() < 1 {
		return errcode.Errorf(errcode.ConfigInvalid, "exec takes a container id")
	}
	id := c.Args().First()
	st, err := runtimeOf(c).State(id)
	if err != nil {
		return err
	}
	p, err := execProcess(c, st)
	if err != nil {
		return err
	}
	g, err := containerGrants(st)
	if err != nil {
		return err
	}
	if g != nil {
		var changes []string
		if p, changes, err = enforce.EnforceProcess(p, g); err != nil {
			return err
		}
		if _, err := auditLog(c).Append(audit.Record{Kind: audit.KindSelection, Operation: "exec", Target: id,
			Tier: g.Tier, Policy: "tier:" + g.Tier, Result: audit.ResultAllowed, Details: changes}); err != nil {
			return err
		}
	}
	pidFile, err := absPath(c.String("pid-file"))
	if err != nil {
		return err
	}
	status, err := runtimeOf(c).Exec(id, container.ExecOptions{Process: p, Detach: c.Bool("detach"), PidFile: pidFile,
		ConsoleSocket: c.String("console-socket"), PreserveFDs: c.Int("preserve-fds"), InitialOnly: initialOnly(st.Annotations)},
		container.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		return err
	}
	if status != 0 {
		return exitError{status}
	}
	return nil
}

// execProcess builds the process: from --process, or from the bundle's
// process with the command line's args and overrides (runc's semantics).
func execProcess(c *cli.Context, st *container.State) (*specs.Process, error) {
	if f := c.String("process"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, errcode.Errorf(errcode.SpecInvalid, "reading process: %v", err)
		}
		var p specs.Process
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, errcode.Errorf(errcode.SpecInvalid, "parsing process: %v", err)
		}
		return &p, nil
	}
	if c.NArg() < 2 {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "exec needs a command or --process")
	}
	data, err := os.ReadFile(filepath.Join(st.Bundle, "config.json"))
	if err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "reading the bundle's spec: %v", err)
	}
	var spec specs.Spec
	if err := json.Unmarshal(data, &spec); err != nil || spec.Process == nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "parsing the bundle's spec: %v", err)
	}
	p := spec.Process
	p.Args = c.Args().Tail()
	p.Terminal = c.Bool("tty")
	if cwd := c.String("cwd"); cwd != "" {
		p.Cwd = cwd
	}
	p.Env = append(p.Env, c.StringSlice("env")...)
	if u := c.String("user"); u != "" {
		uid, gid, _ := strings.Cut(u, ":")
		n, err := strconv.ParseUint(uid, 10, 32)
		if err != nil {
			return nil, errcode.Errorf(errcode.ConfigInvalid, "--user %q: want UID[:GID]", u)
		}
		p.User = specs.User{UID: uint32(n)}
		if gid != "" {
			g, err := strconv.ParseUint(gid, 10, 32)
			if err != nil {
				return nil, errcode.Errorf(errcode.ConfigInvalid, "--user %q: want UID[:GID]", u)
			}
			p.User.GID = uint32(g)
		}
	}
	return p, nil
}
