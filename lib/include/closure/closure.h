/* SPDX-License-Identifier: MIT */
/*
 * <closure/closure.h>: libclosure's API under a path that cannot collide with a program's own
 * closure.h (bcachefs has fs/closure.h). <closure.h> is the same header.
 */
#include "../closure.h"
