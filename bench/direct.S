/* SPDX-License-Identifier: GPL-2.0 */
/* The benchmark module's own copy of the direct-call trampolines (see rust/back/direct.S). */
#include "../rust/back/direct.S"
