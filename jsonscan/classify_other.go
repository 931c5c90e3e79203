//go:build !amd64

package jsonscan

func haveClassify() bool { return false }

func classifyBlocks(*byte, int, *Classes) { panic("jsonscan: no classifyBlocks here") }
