package sbx

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Resources are the creation-only options of `sbx create` that the seed exposes:
// DOCKER_SANDBOX_CPUS, DOCKER_SANDBOX_MEMORY and DOCKER_SANDBOX_TEMPLATE.
type Resources struct {
	CPUs     string // --cpus: a whole number >= 0 (0 = all host CPUs); "" = sbx's default
	Memory   string // --memory: binary units, at least 512 MiB; "" = sbx's default
	Template string // --template: an image reference; "" = the agent's image
}

var templateRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)

// Validate applies sbx's current rules (v0.46, reference §1.3): --cpus a whole number
// >= 0, --memory at least 512 MiB in binary units, --template an image reference. A
// value that could be read as a flag is refused.
func (r Resources) Validate() error {
	if r.CPUs != "" {
		n, err := strconv.Atoi(r.CPUs)
		if err != nil || n < 0 || n > 1024 {
			return fmt.Errorf("DOCKER_SANDBOX_CPUS=%q: want a whole number of CPUs >= 0 (0 = all host CPUs)", r.CPUs)
		}
	}
	if r.Memory != "" {
		if _, err := ParseMemory(r.Memory); err != nil {
			return fmt.Errorf("DOCKER_SANDBOX_MEMORY=%q: %w", r.Memory, err)
		}
	}
	if r.Template != "" && (len(r.Template) > 255 || !templateRE.MatchString(r.Template)) {
		return fmt.Errorf("DOCKER_SANDBOX_TEMPLATE=%q: want an image reference such as docker/sandbox-templates:shell", r.Template)
	}
	return nil
}

// Args returns the create flags for the set options.
func (r Resources) Args() []string {
	var a []string
	if r.CPUs != "" {
		a = append(a, "--cpus", r.CPUs)
	}
	if r.Memory != "" {
		a = append(a, "--memory", r.Memory)
	}
	if r.Template != "" {
		a = append(a, "--template", r.Template)
	}
	return a
}

var memoryRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([kmgt]?)(i?b)?$`)

// ParseMemory parses a size in binary units as sbx does (512m, 4g, 2GiB, 1073741824
// bytes) and enforces sbx's minimum of 512 MiB.
func ParseMemory(s string) (int64, error) {
	m := memoryRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return 0, fmt.Errorf("want a size like 512m, 4g or 2GiB")
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("want a size like 512m, 4g or 2GiB: %w", err)
	}
	if m[2] != "" {
		n *= math.Pow(1024, float64(strings.Index("kmgt", m[2])+1))
	}
	if n < 512<<20 {
		return 0, fmt.Errorf("the minimum is 512 MiB")
	}
	if n > 1<<50 {
		return 0, fmt.Errorf("too large")
	}
	return int64(n), nil
}
