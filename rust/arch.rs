// SPDX-License-Identifier: GPL-2.0

//! x86-64 primitives the fast paths are built from, as inline assembly.
//!
//! The kernel's `this_cpu_*()` operations are C macros; Rust cannot call them, and a call
//! into a C wrapper would cost more than the operation. These are the same instructions
//! the macros emit: a `%gs`-relative access addresses the current CPU's copy of a per-cpu
//! variable, and a single instruction cannot be split by an interrupt or by preemption.
//!
//! `cmpxchg16b` needs the CX16 CPU feature, present on every x86-64 CPU since 2008 (it is
//! part of x86-64-v2); [`has_cmpxchg16b`] is checked once at load.
//!
//! Loads through these helpers are not instrumented by KASAN: the fast path reads the
//! free pointer of an object that may, after a preemption, already belong to another CPU
//! or even have gone back to the page allocator; the value is then discarded because the
//! transaction id no longer matches (see the crate documentation), and the read must not
//! be reported.

#[cfg(not(target_arch = "x86_64"))]
compile_error!("rslub runs on x86-64 only: cmpxchg16b and %gs-relative per-CPU accesses");

use core::{arch::asm, ptr};
use kernel::sync::atomic::{Atomic, AtomicType};

extern "C" {
    /// The per-cpu variable holding each CPU's own per-cpu offset (x86's
    /// `this_cpu_off`, exported by the kernel).
    static this_cpu_off: u64;
}

/// The current CPU's copy of the per-cpu allocation at `base` (`raw_cpu_ptr()`): one
/// `%gs`-relative load of `this_cpu_off`, and an add.
///
/// The task may migrate right after; the pointer still leads to the copy of the CPU it
/// was read on. That is what the fast paths want: every field they read comes from that
/// one copy, and their `%gs`-relative commit fails on any other CPU, because the
/// transaction id they compare carries the CPU number.
///
/// # Safety
///
/// `base` must be the address, in the per-cpu address space, of a live per-cpu
/// allocation.
#[inline(always)]
pub(crate) unsafe fn raw_cpu_ptr(base: *mut u8) -> *mut u8 {
    let off: usize;
    // SAFETY: `this_cpu_off` is a per-cpu `unsigned long` of the kernel; `%gs` holds the
    // current CPU's per-cpu base, so `gs:[this_cpu_off]` is this CPU's offset.
    unsafe {
        asm!("mov {o}, qword ptr gs:[rip + {sym}]", sym = sym this_cpu_off,
             o = lateout(reg) off, options(nostack, preserves_flags, readonly));
    }
    base.wrapping_add(off)
}

/// Reads the `u64` at `base + OFF`, as one load that the compiler neither drops, merges
/// nor moves across the other loads of this module (`READ_ONCE()`).
///
/// # Safety
///
/// `base + OFF` must be valid for reads of a `u64` and aligned.
#[inline(always)]
pub(crate) unsafe fn read_once<const OFF: usize>(base: *const u8) -> u64 {
    let v: u64;
    // SAFETY: The caller guarantees `base + OFF` is a readable, aligned `u64`.
    unsafe {
        asm!("mov {v}, qword ptr [{p} + {off}]", p = in(reg) base, off = const OFF,
             v = lateout(reg) v, options(nostack, preserves_flags, readonly));
    }
    v
}

/// Adds one to the `u64` at per-cpu address `base + off` on the current CPU, with one
/// instruction: safe against interrupts and preemption, and without a bus lock.
///
/// # Safety
///
/// `base + off` must be the address, in the per-cpu address space, of a `u64` inside a
/// live per-cpu allocation.
#[inline(always)]
pub(crate) unsafe fn this_cpu_inc(base: *mut u8, off: usize) {
    // SAFETY: As for `this_cpu_read`; the instruction is a read-modify-write of this CPU's
    // copy only.
    unsafe {
        asm!("inc qword ptr gs:[{p} + {o}]", p = in(reg) base, o = in(reg) off,
             options(nostack));
    }
}

/// [`this_cpu_inc`] with a constant offset, folded into the instruction.
///
/// # Safety
///
/// As for [`this_cpu_inc`], with `off = OFF`.
#[inline(always)]
pub(crate) unsafe fn this_cpu_inc_at<const OFF: usize>(base: *mut u8) {
    // SAFETY: As for `this_cpu_inc`.
    unsafe {
        asm!("inc qword ptr gs:[{p} + {off}]", p = in(reg) base, off = const OFF,
             options(nostack));
    }
}

/// Subtracts one from the `u64` at per-cpu address `base + OFF` on the current CPU, with
/// one instruction (takes back a [`this_cpu_inc_at`] whose event did not happen).
///
/// # Safety
///
/// As for [`this_cpu_inc`], with `off = OFF`.
#[inline(always)]
pub(crate) unsafe fn this_cpu_dec_at<const OFF: usize>(base: *mut u8) {
    // SAFETY: As for `this_cpu_inc`.
    unsafe {
        asm!("dec qword ptr gs:[{p} + {off}]", p = in(reg) base, off = const OFF,
             options(nostack));
    }
}

/// Adds `n` to the `u64` at per-cpu address `base + off` on the current CPU, with one
/// instruction.
///
/// # Safety
///
/// As for [`this_cpu_inc`].
#[inline(always)]
pub(crate) unsafe fn this_cpu_add(base: *mut u8, off: usize, n: u64) {
    // SAFETY: As for `this_cpu_inc`.
    unsafe {
        asm!("add qword ptr gs:[{p} + {o}], {n}", p = in(reg) base, o = in(reg) off,
             n = in(reg) n, options(nostack));
    }
}

/// `cmpxchg16b` on the 16 bytes at `r10`, with the given instruction text (prefix and
/// segment): compares them with `old` and, if equal, writes `new`; evaluates to whether it
/// did.
///
/// `rbx` cannot be named as an operand, so the low half of `new` is swapped into it around
/// the instruction and swapped back after, leaving both registers as they were; `xchg`
/// leaves the flags alone for the jump. The operands are pinned to caller-saved
/// registers, so that no callee-saved one needs saving on the fast path; the jump to a
/// label (asm goto) spares a `sete`/`test` pair.
macro_rules! cmpxchg16b {
    ($insn:literal, $ptr:expr, $old:expr, $new:expr) => {{
        let (old, new): ([u64; 2], [u64; 2]) = ($old, $new);
        'done: {
            asm!(
                "xchg {lo}, rbx",
                $insn,
                "xchg {lo}, rbx",
                "je {ok}",
                in("r10") $ptr,
                lo = in(reg) new[0],
                in("rcx") new[1],
                inout("rax") old[0] => _,
                inout("rdx") old[1] => _,
                ok = label { break 'done true; },
                options(nostack),
            );
            false
        }
    }};
}

/// Compares the 16 bytes at per-cpu address `pcp` on the current CPU with `old` and, if
/// equal, replaces them with `new`. Returns whether it did.
///
/// One `cmpxchg16b` without `lock`: atomic against interrupts and preemption on this CPU
/// (no other CPU writes this CPU's copy), no bus lock.
///
/// # Safety
///
/// `pcp` must be the 16-byte aligned address, in the per-cpu address space, of two `u64`s
/// inside a live per-cpu allocation, and the CPU must have CX16 ([`has_cmpxchg16b`]).
#[inline(always)]
pub(crate) unsafe fn this_cpu_cmpxchg16b(pcp: *mut u64, old: [u64; 2], new: [u64; 2]) -> bool {
    // SAFETY: The caller guarantees the address and the CPU feature; `gs:` makes it this
    // CPU's copy.
    unsafe { cmpxchg16b!("cmpxchg16b xmmword ptr gs:[r10]", pcp, old, new) }
}

/// Compares the 16 bytes at `ptr` with `old` and, if equal, replaces them with `new`,
/// atomically with respect to all CPUs (`lock cmpxchg16b`). Returns whether it did.
///
/// # Safety
///
/// `ptr` must be valid for reads and writes of 16 bytes, 16-byte aligned, and only ever
/// be written atomically while other CPUs may access it; the CPU must have CX16.
#[inline(always)]
pub(crate) unsafe fn cmpxchg16b(ptr: *mut u64, old: [u64; 2], new: [u64; 2]) -> bool {
    // SAFETY: The caller guarantees the address and the CPU feature.
    unsafe { cmpxchg16b!("lock cmpxchg16b xmmword ptr [r10]", ptr, old, new) }
}

/// Reads the `usize` at `base + off` without KASAN instrumentation (see the module
/// documentation).
///
/// # Safety
///
/// `base + off` must be mapped and aligned for a `usize`; the memory may be concurrently
/// written, and the value is only meaningful if the caller validates it afterwards.
#[inline(always)]
pub(crate) unsafe fn read_word_unchecked(base: *const u8, off: usize) -> usize {
    let v: usize;
    // SAFETY: The caller guarantees `base + off` is mapped and aligned.
    unsafe {
        asm!("mov {v}, qword ptr [{b} + {o}]", b = in(reg) base, o = in(reg) off,
             v = lateout(reg) v, options(nostack, preserves_flags, readonly));
    }
    v
}

/// Whether the CPU has `cmpxchg16b` (CPUID.01H:ECX bit 13).
pub(crate) fn has_cmpxchg16b() -> bool {
    // `cpuid` leaf 1 exists on every x86-64 CPU and has no side effects.
    let r = core::arch::x86_64::__cpuid(1);
    r.ecx & (1 << 13) != 0
}

/// `a.load(Relaxed)`, inline. The kernel's Rust atomics call C helpers
/// (`atomic_read()`, `atomic64_read()`) that a module cannot inline: a call, a return and
/// the register saves around them, for what C compiles to one `mov` (`READ_ONCE()`). The
/// slow paths read tunables and slab state this way.
#[inline(always)]
pub(crate) fn load_relaxed<T: AtomicType>(a: &Atomic<T>) -> T {
    // SAFETY: `as_ptr` is valid and aligned for as long as `a` lives, and holds a valid
    // `T`; a volatile load of an aligned word of at most 8 bytes is one load instruction,
    // which is what `READ_ONCE()`, and so `Atomic::load(Relaxed)`, is on x86-64.
    unsafe { ptr::read_volatile(a.as_ptr()) }
}
