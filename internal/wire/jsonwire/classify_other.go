//go:build !amd64

package jsonwire

func haveClassify() bool { return false }

func classifyBlocks(*byte, int, *Classes) { panic("jsonwire: no classifyBlocks here") }
