#include "textflag.h"

// func indexPairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int
//
// For q in [0, n&^31): the first q with a[q]|m1 == c1 && b[q]|m2 == c2, else -1.
// 64 positions per step while they last, then 32. The byte arguments are broadcast
// straight from memory: moving them through an X register with a legacy SSE
// instruction would cost an AVX/SSE state transition on every call.
TEXT ·indexPairBlocks(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPBROADCASTB c1+24(FP), Y0
	VPBROADCASTB m1+25(FP), Y1
	VPBROADCASTB c2+26(FP), Y2
	VPBROADCASTB m2+27(FP), Y3
	XORQ DX, DX
	MOVQ CX, BX
	ANDQ $~63, BX
	ANDQ $~31, CX

loop64:
	CMPQ DX, BX
	JAE  loop32
	VMOVDQU (SI)(DX*1), Y4
	VMOVDQU (DI)(DX*1), Y5
	VMOVDQU 32(SI)(DX*1), Y6
	VMOVDQU 32(DI)(DX*1), Y7
	VPOR     Y1, Y4, Y4
	VPOR     Y3, Y5, Y5
	VPOR     Y1, Y6, Y6
	VPOR     Y3, Y7, Y7
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPCMPEQB Y0, Y6, Y6
	VPCMPEQB Y2, Y7, Y7
	VPAND    Y4, Y5, Y5
	VPAND    Y6, Y7, Y7
	VPOR     Y5, Y7, Y8
	VPTEST   Y8, Y8
	JNZ      found64
	ADDQ     $64, DX
	JMP      loop64

found64:
	VPMOVMSKB Y5, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, DX
	VPMOVMSKB Y7, AX
	JMP       found

loop32:
	CMPQ DX, CX
	JAE  notfound
	VMOVDQU (SI)(DX*1), Y4
	VMOVDQU (DI)(DX*1), Y5
	VPOR      Y1, Y4, Y4
	VPOR      Y3, Y5, Y5
	VPCMPEQB  Y0, Y4, Y4
	VPCMPEQB  Y2, Y5, Y5
	VPAND     Y4, Y5, Y5
	VPMOVMSKB Y5, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, DX
	JMP       loop32

found:
	BSFL AX, AX
	ADDQ DX, AX
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

notfound:
	VZEROUPPER
	MOVQ $-1, ret+32(FP)
	RET
