// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark module links rslub's C shim and the test helpers (threads, pinning,
 * clock), plus the in-kernel kmem_cache creation it compares with.
 */
#include "../tests-kunit/shim.c"

#include <linux/slab.h>

struct kmem_cache *rslub_bench_kc_create(const char *name, unsigned int size);

/* An in-kernel cache that is not merged with any other (SLAB_NO_MERGE). */
struct kmem_cache *rslub_bench_kc_create(const char *name, unsigned int size)
{
	return kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
}
