package jsonwire

import "golang.org/x/sys/cpu"

// haveClassify reports whether classifyBlocks can run on this CPU.
func haveClassify() bool { return cpu.X86.HasAVX2 }

// classifyBlocks is Classify of the n blocks at p into c. It is in classify_amd64.s
// (AVX2), which knows Classes' layout.
//
//go:noescape
func classifyBlocks(p *byte, n int, c *Classes)
