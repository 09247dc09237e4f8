// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_client: a C module using rslub's API (include/rslub.h), the way another driver
 * would. It creates a cache at load and keeps a few objects, each filled with a pattern,
 * while it is loaded; at unload it checks the patterns, frees the objects and destroys
 * the cache. While it is loaded, rslub cannot be unloaded: the kernel counts the
 * client's references to rslub's exported symbols (make test checks this).
 */
#include <linux/module.h>
#include <linux/string.h>

#include <rslub.h>

#define CLIENT_OBJECTS	16
#define CLIENT_SIZE	96

static struct rslub_cache *cache;
static void *objs[CLIENT_OBJECTS];

static int __init rslub_client_init(void)
{
	int i;

	cache = rslub_cache_create("rslub_client", CLIENT_SIZE, 0, RSLUB_HWCACHE_ALIGN, NULL);
	if (IS_ERR(cache))
		return PTR_ERR(cache);
	for (i = 0; i < CLIENT_OBJECTS; i++) {
		objs[i] = rslub_cache_alloc(cache, GFP_KERNEL);
		if (!objs[i])
			goto fail;
		memset(objs[i], i, CLIENT_SIZE);
	}
	pr_info("rslub_client: cache rslub_client holds %d objects\n", CLIENT_OBJECTS);
	return 0;
fail:
	while (i--)
		rslub_cache_free(cache, objs[i]);
	rslub_cache_destroy(cache);
	return -ENOMEM;
}

static void __exit rslub_client_exit(void)
{
	int i, changed = 0;

	for (i = 0; i < CLIENT_OBJECTS; i++) {
		if (memchr_inv(objs[i], i, CLIENT_SIZE))
			changed++;
		rslub_cache_free(cache, objs[i]);
	}
	pr_info("rslub_client: %d objects changed, destroy: %d\n", changed,
		rslub_cache_destroy(cache));
}

module_init(rslub_client_init);
module_exit(rslub_client_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Example C user of rslub's kmem cache API");
