// SPDX-License-Identifier: GPL-2.0

//! Dynamic per-cpu allocations (`alloc_percpu()`), with typed access.
//!
//! A per-cpu pointer is an address in the per-cpu address space: the current CPU reaches
//! its copy with `%gs`-relative instructions ([`crate::arch`]), any CPU's copy is at the
//! pointer plus that CPU's `__per_cpu_offset`.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, cpu::CpuId, error::code::ENOMEM, prelude::*};

/// One `T` per possible CPU, zero-initialised.
///
/// # Invariants
///
/// `ptr` is a live per-cpu allocation of a `T` with `T`'s alignment, owned by this value;
/// every CPU's copy is a valid `T` (all-zero is a valid `T`).
pub(crate) struct PerCpu<T: Zeroable> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

// SAFETY: `PerCpu` only hands out raw pointers; the users synchronise their accesses (each
// CPU writes its own copy, readers of other CPUs' copies accept torn counts).
unsafe impl<T: Zeroable + Send> Send for PerCpu<T> {}
// SAFETY: As above.
unsafe impl<T: Zeroable + Send> Sync for PerCpu<T> {}

impl<T: Zeroable> PerCpu<T> {
    /// Allocates a zeroed `T` for every possible CPU. May sleep.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: Any size and a power-of-two alignment are accepted; `pcpu_alloc` returns
        // zeroed memory or null.
        let p = unsafe {
            bindings::pcpu_alloc_noprof(
                core::mem::size_of::<T>(),
                core::mem::align_of::<T>(),
                false,
                bindings::GFP_KERNEL,
            )
        };
        // INVARIANT: a non-null result is a fresh, zeroed per-cpu allocation of a `T`.
        Ok(Self {
            ptr: NonNull::new(p.cast()).ok_or(ENOMEM)?,
            _owns: PhantomData,
        })
    }

    /// The per-cpu address, for `%gs`-relative access by the current CPU.
    #[inline(always)]
    pub(crate) fn pcpu(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// `cpu`'s copy (`per_cpu_ptr()`).
    pub(crate) fn on(&self, cpu: CpuId) -> *mut T {
        // SAFETY: `__per_cpu_offset` is written during boot only; `cpu` is a valid index.
        let off = unsafe { bindings::__per_cpu_offset[cpu.as_u32() as usize] };
        self.ptr.as_ptr().wrapping_byte_add(off)
    }

    /// The current CPU's copy. Only stable while the caller cannot migrate (interrupts or
    /// preemption off).
    pub(crate) fn this_cpu(&self) -> *mut T {
        self.on(CpuId::current())
    }
}

impl<T: Zeroable> Drop for PerCpu<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is a live per-cpu allocation owned by us.
        unsafe { bindings::free_percpu(self.ptr.as_ptr().cast()) };
    }
}

/// The online CPUs (`for_each_online_cpu()`): a snapshot, CPUs may come and go.
pub(crate) fn online_cpus() -> impl Iterator<Item = CpuId> {
    possible_cpus().filter(|&c| crate::shim::cpu_online(c))
}

/// The possible CPUs (`for_each_possible_cpu()`).
pub(crate) fn possible_cpus() -> impl Iterator<Item = CpuId> {
    (0..kernel::cpu::nr_cpu_ids()).filter_map(|c| {
        let id = CpuId::from_u32(c)?;
        crate::shim::cpu_possible(id).then_some(id)
    })
}
