//go:build linux

package sbxsim

import "context"

// cloudPorts is ports under --cloud.
func (c *cli) cloudPorts(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	return c.ports(ctx, args)
}

// cloudPort is port (sbx >= 0.55) under --cloud.
func (c *cli) cloudPort(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	return c.port(ctx, args)
}

// cloudURLs are the public URLs of a cloud sandbox's published ports.
func (c *cli) cloudURLs(sb *Sandbox) []string { return []string{} }
