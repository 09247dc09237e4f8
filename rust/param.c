// SPDX-License-Identifier: GPL-2.0
/*
 * rslub's string module parameters, which the Rust module! macro cannot declare:
 * back=<name>[,<name>...] names kernel caches to back at load, back=all every cache rslub
 * can serve as it allocates (Documentation/backing.rst);
 * debug=<flags>[,<cache>...] turns on debug checks (Documentation/reliability.rst);
 * profile=classic|tuned: classic SLUB 6.12's defaults (the default) or rslub's tuned ones;
 * direct=n hooks every function with ftrace's IPMODIFY handler, none with a direct call.
 * Also rslub.back= and rslub.debug= on the kernel command line, which modprobe passes on.
 */
#include <linux/moduleparam.h>

const char *rslub_back_param(void);
const char *rslub_debug_param(void);
const char *rslub_profile_param(void);

static char rslub_back_names[256];
module_param_string(back, rslub_back_names, sizeof(rslub_back_names), 0444);
MODULE_PARM_DESC(back, "Kernel caches to back at load, comma-separated (e.g. skbuff_head_cache), or all: every cache rslub can serve, as it allocates (rmmod refused then)");

const char *rslub_back_param(void)
{
	return rslub_back_names;
}

static char rslub_debug_spec[256];
module_param_string(debug, rslub_debug_spec, sizeof(rslub_debug_spec), 0444);
MODULE_PARM_DESC(debug, "Debug checks, as slub_debug: F Z P U or - , then optional cache names (e.g. FZPU,my_cache)");

const char *rslub_debug_param(void)
{
	return rslub_debug_spec;
}

static char rslub_profile_name[16];
module_param_string(profile, rslub_profile_name, sizeof(rslub_profile_name), 0444);
MODULE_PARM_DESC(profile, "Defaults of every cache: classic (SLUB 6.12's, the default) or tuned (rslub's min_partial rule, remote walk and ratio draw); Documentation/design.rst lists them");

const char *rslub_profile_param(void)
{
	return rslub_profile_name;
}

/* Read by rust/back/register.c whenever it registers the hooks. */
bool rslub_direct_param = true;
module_param_named(direct, rslub_direct_param, bool, 0644);
MODULE_PARM_DESC(direct, "Hook kfree, kmem_cache_free and kmem_cache_alloc with ftrace direct calls (default y), or with the IPMODIFY handler as the other functions (n); read when the hooks are next registered");
