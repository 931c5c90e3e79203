package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/doctor"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func doctorCommand() command {
	var asJSON, smoke bool
	return command{
		name:     "doctor",
		synopsis: "[--json] [--smoke]",
		summary:  "check that this host can run sandboxes (sbx found, version, daemon, sign-in, virtualization, disk, SSH agent); exit 0 only if nothing FAILs",
		help: `Checks what pi-sbx-backend needs of this host and of sbx: sbx found (where; PI_SBX_BIN,
PATH, then /opt/homebrew/bin, /usr/local/bin, ~/.local/bin and winget's folders), its
version (new enough; client and daemon the same), its daemon running, signed in to Docker,
virtualization available, disk space (from sbx diagnose), SSH agent forwarding (a
warning), and with --smoke a real create, exec and rm of a throwaway sandbox. Each check
prints PASS, WARN or FAIL with its evidence and, for a FAIL, the command that fixes it.
Exit status 0 only if nothing FAILs.`,
		env: []envDoc{{"PI_SBX_BIN", "the sbx program (default: sbx on PATH, then the usual install places)"}},
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
			fs.BoolVar(&smoke, "smoke", false, "also create, exec and remove a throwaway sandbox")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			st, err := hostSettings()
			if err != nil {
				return err
			}
			d := &doctor.Doctor{Sbx: st.Client(sbx.ExecRunner{}), Host: doctor.ThisHost(), Smoke: smoke}
			if smoke {
				dir, err := os.MkdirTemp("", "pi-sbx-doctor-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				d.Workspace = dir
			}
			r := d.Run(ctx)
			if asJSON {
				b, err := r.JSON()
				if err != nil {
					return err
				}
				fmt.Fprintln(std.out, string(b))
			} else {
				fmt.Fprint(std.out, r.Text())
			}
			if !r.OK() {
				return exitError{code: 1}
			}
			return nil
		},
	}
}
