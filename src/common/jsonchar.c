#include "common/jsonchar.h"

/* Row r holds bytes 0xr0..0xrf: NO nothing, WS whitespace, NM a number's
 * sign, point or exponent, DG a decimal digit (and e, E:
 * hex digits and exponents), HX another hex letter, ST a byte
 * that stops a plain run (SW: a whitespace control character), DL DEL. */
#define NO 0
#define WS OP_JC_WS
#define NM OP_JC_NUM
#define HX OP_JC_HEX
#define DG (OP_JC_NUM | OP_JC_HEX)
#define ST (OP_JC_STOP | OP_JC_ESC)
#define SW (OP_JC_WS | OP_JC_STOP | OP_JC_ESC)
#define DL OP_JC_ESC /* DEL: valid inside a JSON string, but invisible and harmful in terminals */
const unsigned char op_json_char[256] = {
    /* 0_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, SW, SW, ST, ST, SW, ST, ST,
    /* 1_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* 2_ */ WS, NO, ST, NO, NO, NO, NO, NO, NO, NO, NO, NM, NO, NM, NM, NO,
    /* 3_ */ DG, DG, DG, DG, DG, DG, DG, DG, DG, DG, NO, NO, NO, NO, NO, NO,
    /* 4_ */ NO, HX, HX, HX, HX, DG, HX, NO, NO, NO, NO, NO, NO, NO, NO, NO,
    /* 5_ */ NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, ST, NO, NO, NO,
    /* 6_ */ NO, HX, HX, HX, HX, DG, HX, NO, NO, NO, NO, NO, NO, NO, NO, NO,
    /* 7_ */ NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, DL,
    /* 8_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* 9_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* a_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* b_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* c_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* d_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* e_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
    /* f_ */ ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST, ST,
};
