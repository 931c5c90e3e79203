#include "textflag.h"

// HALF classifies the 32 bytes at OFF(SI) into the 32-bit halves at HOFF of block DX's
// masks in the Classes at R8 (Quote at 0, Backslash at 128, Control at 256, Escape at
// 384, U at 512).
#define HALF(OFF, HOFF) \
	VMOVDQU   OFF(SI), Y10 \
	VPCMPEQB  Y0, Y10, Y11 \
	VPMOVMSKB Y11, AX \
	MOVL      AX, (0+HOFF)(R8)(DX*8) \
	VPCMPEQB  Y1, Y10, Y12 \
	VPMOVMSKB Y12, AX \
	MOVL      AX, (128+HOFF)(R8)(DX*8) \
	VPMINUB   Y2, Y10, Y13 \
	VPCMPEQB  Y10, Y13, Y13 \
	VPMOVMSKB Y13, AX \
	MOVL      AX, (256+HOFF)(R8)(DX*8) \
	VPCMPEQB  Y9, Y10, Y14 \
	VPMOVMSKB Y14, AX \
	MOVL      AX, (512+HOFF)(R8)(DX*8) \
	VPOR      Y11, Y12, Y11 \
	VPOR      Y14, Y11, Y11 \
	VPCMPEQB  Y3, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPCMPEQB  Y4, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPCMPEQB  Y5, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPCMPEQB  Y6, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPCMPEQB  Y7, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPCMPEQB  Y8, Y10, Y13 \
	VPOR      Y13, Y11, Y11 \
	VPMOVMSKB Y11, AX \
	MOVL      AX, (384+HOFF)(R8)(DX*8)

// func classifyBlocks(p *byte, n int, c *Classes)
//
// For each 64-byte block k at p: bit j of c.Quote[k], c.Backslash[k], c.Control[k],
// c.Escape[k] and c.U[k] is set when byte j is '"'; '\\'; below 0x20 (unsigned:
// min(x, 0x1f) == x); one of "\\/bfnrtu; 'u'.
TEXT ·classifyBlocks(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ c+16(FP), R8
	// The constants, broadcast from memory (no SSE/AVX transition).
	VPBROADCASTB consts<>+0(SB), Y0 // "
	VPBROADCASTB consts<>+1(SB), Y1 // \\
	VPBROADCASTB consts<>+2(SB), Y2 // 0x1f
	VPBROADCASTB consts<>+3(SB), Y3 // /
	VPBROADCASTB consts<>+4(SB), Y4 // b
	VPBROADCASTB consts<>+5(SB), Y5 // f
	VPBROADCASTB consts<>+6(SB), Y6 // n
	VPBROADCASTB consts<>+7(SB), Y7 // r
	VPBROADCASTB consts<>+8(SB), Y8 // t
	VPBROADCASTB consts<>+9(SB), Y9 // u
	XORQ DX, DX

loop:
	CMPQ DX, CX
	JAE  done
	HALF(0, 0)
	HALF(32, 4)
	ADDQ $64, SI
	INCQ DX
	JMP  loop

done:
	VZEROUPPER
	RET

DATA consts<>+0(SB)/1, $0x22
DATA consts<>+1(SB)/1, $0x5c
DATA consts<>+2(SB)/1, $0x1f
DATA consts<>+3(SB)/1, $0x2f
DATA consts<>+4(SB)/1, $0x62
DATA consts<>+5(SB)/1, $0x66
DATA consts<>+6(SB)/1, $0x6e
DATA consts<>+7(SB)/1, $0x72
DATA consts<>+8(SB)/1, $0x74
DATA consts<>+9(SB)/1, $0x75
GLOBL consts<>(SB), RODATA|NOPTR, $10
