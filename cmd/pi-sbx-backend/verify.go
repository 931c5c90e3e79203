package main

import (
	"context"
	"flag"
	"fmt"
)

type verifyOptions struct {
	dirs dirOptions
}

func verifyCommand() command {
	var o verifyOptions
	return command{
		name:     "verify",
		synopsis: "[--workspace DIR]",
		summary:  "run the live isolation audit of the session's sandbox (exit 0 only if all 11 checks pass)",
		help: `Runs docker_verify's eleven checks (transport, env scrub, env forwarding, daemon
pinning, mounts, contexts, host socket, port binds, ssh agent, containers, network)
against the session's sandbox and prints each verdict with its evidence (ssh agent warns
while sbx forwards the SSH agent, its default; network warns on an allow-all policy and
fails on one looser than PI_SBX_NETWORK). The sandbox is DOCKER_SANDBOX's when set (created
if missing, kept); otherwise a sess sandbox is created for the audit and removed after
it. Exit status 0 only if every check passes, 1 if any fails.`,
		env: append(append([]envDoc{}, sandboxEnv...), deployEnv...),
		flags: func(fs *flag.FlagSet) {
			o.dirs.define(fs, "working `DIR`")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			return runVerify(ctx, std, o)
		},
	}
}

func runVerify(ctx context.Context, std stdio, o verifyOptions) error {
	sess, err := openSession(ctx, std, o.dirs, sessionRole{})
	if err != nil {
		return err
	}
	defer func() {
		if err := sess.End(ctx); err != nil {
			fmt.Fprintf(std.err, "%s verify: %v\n", prog, err)
		}
	}()
	d, err := sess.Deployer(false)
	if err != nil {
		return err
	}
	report, err := d.Verify(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(std.out, report.String())
	if !report.Passed() {
		return exitError{code: 1}
	}
	return nil
}
