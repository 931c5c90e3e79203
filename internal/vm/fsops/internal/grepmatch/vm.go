package grepmatch

import (
	"sort"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/rxsyntax"
)

// rxVM matches a translated pattern on one line with a Pike VM (a breadth-first NFA
// simulation, linear in the line's length): it is used for lines beyond ASCII when the
// pattern has Unicode word boundaries (\b, \B), which ripgrep's engine has and Go's
// regexp lacks. On ASCII lines the two agree and Go's regexp runs.
type rxVM struct {
	prog []vmInst
	word *rxsyntax.Class // Unicode \w, for word boundaries
}

type vmOp uint8

const (
	vmRune vmOp = iota
	vmSplit
	vmJmp
	vmMatch
	vmAssert
)

type vmInst struct {
	op     vmOp
	ranges []rxsyntax.Range // vmRune: sorted
	x, y   int              // vmSplit: both; vmJmp: x
	assert rxsyntax.Op      // vmAssert
	uni    bool             // vmAssert on a word boundary: Unicode-aware
}

// vmMaxInsts bounds the program (repetitions are spelled out); a bigger pattern keeps
// Go's ASCII-only word boundaries instead.
const vmMaxInsts = 100000

// newRxVM compiles h, or returns nil if the program would be too big.
func newRxVM(h *rxsyntax.Hir) *rxVM {
	vm := &rxVM{word: rxsyntax.PerlSet('w')}
	if !vm.compile(h) || len(vm.prog) >= vmMaxInsts {
		return nil
	}
	vm.prog = append(vm.prog, vmInst{op: vmMatch})
	return vm
}

func (vm *rxVM) emit(i vmInst) int {
	vm.prog = append(vm.prog, i)
	return len(vm.prog) - 1
}

func (vm *rxVM) compile(h *rxsyntax.Hir) bool {
	if len(vm.prog) >= vmMaxInsts {
		return false
	}
	switch h.Op {
	case rxsyntax.OpEmpty:
	case rxsyntax.OpLiteral:
		c := &rxsyntax.Class{}
		c.Add(h.Rune, h.Rune)
		if h.Fold {
			c.FoldCase()
		}
		vm.emit(vmInst{op: vmRune, ranges: c.Ranges})
	case rxsyntax.OpByte:
		vm.emit(vmInst{op: vmRune, ranges: []rxsyntax.Range{{Lo: utf8.RuneError, Hi: utf8.RuneError}}})
	case rxsyntax.OpClass:
		r := h.Class.Ranges
		if h.Class.Bytes { // as rxsyntax.GoSyntax writes it: a byte above 0x7F stands for any non-ASCII character
			n := &rxsyntax.Class{}
			for _, x := range r {
				if x.Hi > 0x7F {
					n.Add(0x80, 0x10FFFF)
					x.Hi = 0x7F
				}
				if x.Lo <= x.Hi {
					n.Add(x.Lo, x.Hi)
				}
			}
			n.Canon()
			r = n.Ranges
		}
		vm.emit(vmInst{op: vmRune, ranges: r})
	case rxsyntax.OpLineStart, rxsyntax.OpLineEnd, rxsyntax.OpWordBoundary, rxsyntax.OpNotWordBoundary:
		vm.emit(vmInst{op: vmAssert, assert: h.Op, uni: h.Unicode})
	case rxsyntax.OpConcat:
		for _, s := range h.Subs {
			if !vm.compile(s) {
				return false
			}
		}
	case rxsyntax.OpAlternate:
		// split L1, next; L1: a; jmp end; next: split L2, next2; ...
		var jumps []int
		for i, s := range h.Subs {
			if i == len(h.Subs)-1 {
				if !vm.compile(s) {
					return false
				}
				break
			}
			split := vm.emit(vmInst{op: vmSplit})
			vm.prog[split].x = len(vm.prog)
			if !vm.compile(s) {
				return false
			}
			jumps = append(jumps, vm.emit(vmInst{op: vmJmp}))
			vm.prog[split].y = len(vm.prog)
		}
		for _, j := range jumps {
			vm.prog[j].x = len(vm.prog)
		}
	case rxsyntax.OpRepeat:
		sub := h.Subs[0]
		for i := 0; i < h.Min; i++ {
			if !vm.compile(sub) {
				return false
			}
		}
		if h.Max < 0 { // L: split body, end; body; jmp L
			split := vm.emit(vmInst{op: vmSplit})
			vm.prog[split].x = len(vm.prog)
			if !vm.compile(sub) {
				return false
			}
			vm.emit(vmInst{op: vmJmp, x: split})
			vm.prog[split].y = len(vm.prog)
			return true
		}
		var splits []int
		for i := h.Min; i < h.Max; i++ {
			split := vm.emit(vmInst{op: vmSplit})
			vm.prog[split].x = len(vm.prog)
			splits = append(splits, split)
			if !vm.compile(sub) {
				return false
			}
		}
		for _, sp := range splits {
			vm.prog[sp].y = len(vm.prog)
		}
	}
	return len(vm.prog) < vmMaxInsts
}

func inRxRanges(r []rxsyntax.Range, c rune) bool {
	i := sort.Search(len(r), func(i int) bool { return r[i].Hi >= c })
	return i < len(r) && r[i].Lo <= c
}

func (vm *rxVM) isWord(c rune, uni bool) bool {
	if c < 0 {
		return false
	}
	if c < utf8.RuneSelf || !uni {
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return inRxRanges(vm.word.Ranges, c)
}

// match reports whether the pattern matches somewhere in line.
func (vm *rxVM) match(line []byte) bool {
	n := len(vm.prog)
	clist, nlist := make([]int, 0, 16), make([]int, 0, 16)
	seen := make([]int, n) // generation in which a pc was added, per step
	gen := 0
	var stack []int
	prev := rune(-1)
	// add follows the empty transitions from pc at the current position; it reports a
	// match reached.
	add := func(list *[]int, pc int, pos int, next rune) bool {
		stack = append(stack[:0], pc)
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[pc] == gen {
				continue
			}
			seen[pc] = gen
			in := &vm.prog[pc]
			switch in.op {
			case vmMatch:
				return true
			case vmJmp:
				stack = append(stack, in.x)
			case vmSplit:
				stack = append(stack, in.y, in.x)
			case vmAssert:
				ok := false
				switch in.assert {
				case rxsyntax.OpLineStart:
					ok = pos == 0
				case rxsyntax.OpLineEnd:
					ok = pos == len(line)
				case rxsyntax.OpWordBoundary:
					ok = vm.isWord(prev, in.uni) != vm.isWord(next, in.uni)
				case rxsyntax.OpNotWordBoundary:
					ok = vm.isWord(prev, in.uni) == vm.isWord(next, in.uni)
				}
				if ok {
					stack = append(stack, pc+1)
				}
			case vmRune:
				*list = append(*list, pc)
			}
		}
		return false
	}
	for pos := 0; ; {
		next, size := rune(-1), 0
		if pos < len(line) {
			next, size = utf8.DecodeRune(line[pos:])
		}
		gen++
		// The threads carried over, then a new one starting here (unanchored search).
		cur := clist
		nlist = nlist[:0]
		for _, pc := range cur {
			if add(&nlist, pc, pos, next) {
				return true
			}
		}
		if add(&nlist, 0, pos, next) {
			return true
		}
		if pos >= len(line) {
			return false
		}
		// Step over the rune at pos.
		clist = clist[:0]
		for _, pc := range nlist {
			if inRxRanges(vm.prog[pc].ranges, next) {
				clist = append(clist, pc+1)
			}
		}
		prev = next
		pos += size
	}
}
