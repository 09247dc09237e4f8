// SPDX-License-Identifier: GPL-2.0
/*
 * Exports rslub's C API (defined in Rust, rust/api.rs) to other modules.
 */
#include <linux/export.h>

#include <rslub.h>

EXPORT_SYMBOL_GPL(rslub_cache_create);
EXPORT_SYMBOL_GPL(rslub_cache_destroy);
EXPORT_SYMBOL_GPL(rslub_cache_alloc);
EXPORT_SYMBOL_GPL(rslub_cache_alloc_node);
EXPORT_SYMBOL_GPL(rslub_cache_free);
EXPORT_SYMBOL_GPL(rslub_cache_alloc_bulk);
EXPORT_SYMBOL_GPL(rslub_cache_free_bulk);
EXPORT_SYMBOL_GPL(rslub_cache_shrink);
