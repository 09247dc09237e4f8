// SPDX-License-Identifier: GPL-2.0
/* rslub_kmem_micro_api: bench/kmem_micro.c over an rslub cache, through include/rslub.h. */
#define RSLUB_API
#include "kmem_micro.c"
