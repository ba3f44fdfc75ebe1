package main

import (
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/engine"
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
			&cli.StringSliceFlag{Name: "additional-gids", Aliases: []string{"g"}, Usage: "additional gid (repeat)"},
			&cli.StringSliceFlag{Name: "cap", Aliases: []string{"c"}, Usage: "add a capability (repeat; the tier may take it away)"},
			&cli.BoolFlag{Name: "no-new-privs", Usage: "set no_new_privileges"},
			&cli.StringFlag{Name: "apparmor", Usage: "AppArmor profile"},
			&cli.StringFlag{Name: "process-label", Usage: "SELinux process label"},
			&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many extra fds (3, 4, …)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return errcode.Errorf(errcode.ConfigInvalid, "exec takes a container id")
			}
			var gids []uint32
			for _, s := range c.StringSlice("additional-gids") {
				n, err := strconv.ParseUint(s, 10, 32)
				if err != nil {
					return errcode.Errorf(errcode.ConfigInvalid, "--additional-gids %q: want a number", s)
				}
				gids = append(gids, uint32(n))
			}
			req := engine.ExecRequest{ID: c.Args().First(), ProcessFile: c.String("process"), Args: c.Args().Tail(),
				Terminal: c.Bool("tty"), Cwd: c.String("cwd"), Env: c.StringSlice("env"), User: c.String("user"),
				AdditionalGids: gids, Caps: c.StringSlice("cap"), NoNewPrivs: c.Bool("no-new-privs"),
				AppArmor: c.String("apparmor"), ProcessLabel: c.String("process-label"),
				Detach: c.Bool("detach"), PidFile: c.String("pid-file"), ConsoleSocket: c.String("console-socket"),
				PreserveFDs: c.Int("preserve-fds")}
			return exitStatus(eng(c).Exec(req, container.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
		},
	}
}
