// SPDX-License-Identifier: GPL-2.0
/* The test module links its own copy of rslub's C shim. */
#include "../rust/shim.c"
