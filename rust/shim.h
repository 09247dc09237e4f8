/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thin C wrappers for kernel inline functions and macros that Rust cannot call.
 * Their only caller is rust/shim.rs, which gives them safe Rust signatures.
 */
#ifndef RSLUB_SHIM_H
#define RSLUB_SHIM_H

unsigned int rslub_num_present_cpus(void);
unsigned int rslub_num_online_nodes(void);

#endif /* RSLUB_SHIM_H */
