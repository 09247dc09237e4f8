// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C wrappers for kernel inline functions and macros that Rust cannot call.
 * Each one is a single call; the Rust side (rust/shim.rs) documents its contract.
 */
#include <linux/cpumask.h>
#include <linux/nodemask.h>

#include "shim.h"

unsigned int rslub_num_present_cpus(void)
{
	return num_present_cpus();
}

unsigned int rslub_num_online_nodes(void)
{
	return num_online_nodes();
}
