// SPDX-License-Identifier: GPL-2.0
/*
 * rslub's string module parameter, which the Rust module! macro cannot declare:
 * back=<name>[,<name>...] names kernel caches to back at load (Documentation/backing.rst).
 * Also rslub.back= on the kernel command line, which modprobe passes on.
 */
#include <linux/moduleparam.h>

const char *rslub_back_param(void);

static char rslub_back_names[256];
module_param_string(back, rslub_back_names, sizeof(rslub_back_names), 0444);
MODULE_PARM_DESC(back, "Kernel caches to back at load, comma-separated (e.g. skbuff_head_cache)");

const char *rslub_back_param(void)
{
	return rslub_back_names;
}
