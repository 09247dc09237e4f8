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

#include <linux/fs.h>
#include <linux/kstrtox.h>

int rslub_bench_kc_attr(const char *name, const char *attr, unsigned long *v);
void rslub_bench_set_direct(bool on);

/* The first number in /sys/kernel/slab/@name/@attr, as a user reads it. */
int rslub_bench_kc_attr(const char *name, const char *attr, unsigned long *v)
{
	char path[128], buf[64] = "";
	struct file *f;
	loff_t pos = 0;
	ssize_t got;
	char *end;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", name, attr);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	got = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (got <= 0)
		return got < 0 ? got : -EINVAL;
	buf[got] = '\0';
	end = strpbrk(buf, " \n");
	if (end)
		*end = '\0';
	return kstrtoul(buf, 10, v);
}

/* The direct= parameter of this module's copy of the hooks (rust/param.c). */
void rslub_bench_set_direct(bool on)
{
	WRITE_ONCE(rslub_direct_param, on);
}
