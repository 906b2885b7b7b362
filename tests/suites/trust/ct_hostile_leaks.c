/*
 * Two closures leaked in functions whose names a C identifier cannot hold, for ct_hostile's
 * leaks mode: ESC and BEL (a terminal's title), and a lone 0x9b (an 8-bit CSI), a byte 0x85, C1
 * as UTF-8 (U+009B) and a byte that is not UTF-8 (0xff). Built without debug information
 * (CMakeLists.txt), so that the recorder names them by their symbols, as given here.
 */
#include <stdlib.h>

#include <closure.h>

void hostile_leaks(void);
static __attribute__((noinline)) void leak_esc(void) __asm__("\"leak\033]2;ESC\007\"");
static __attribute__((noinline)) void leak_c1(void) __asm__("\"leak\233[2J\205\302\233\377\"");

static volatile int leaking; /* which one: no two bodies alike, none folded into another */

/* Each leaks its closure: initialised, its running reference never given up. */
static void leak_esc(void)
{
	leaking = 1;
	closure_init(calloc(1, sizeof(struct closure)), NULL);
}

static void leak_c1(void)
{
	leaking = 2;
	closure_init(calloc(1, sizeof(struct closure)), NULL);
}

void hostile_leaks(void)
{
	leak_esc();
	leak_c1();
}
