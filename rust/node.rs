// SPDX-License-Identifier: GPL-2.0

//! Per-node state of a cache (`kmem_cache_node`): the partial list under its lock (and,
//! for debug caches, the list of full slabs, as SLUB keeps it for `validate`), and slab
//! counts.

use crate::{
    arch,
    shim::IrqDisabled,
    slab::{Slab, ON_FULL, ON_NO_LIST, ON_PARTIAL},
};
use core::ptr;
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed},
        lock::spinlock::SpinLockGuard,
        SpinLock,
    },
};

/// A list of slabs of a node: the partial list (slabs that have free objects and are no
/// CPU's active slab), or a debug cache's full list.
///
/// # Invariants
///
/// `head`..`tail` is a doubly linked list, through [`Slab::links`], of `nr` distinct live
/// slabs of this node, each with `on == kind`; no other slab has `on == kind`.
pub(crate) struct PartialList {
    head: *mut Slab,
    tail: *mut Slab,
    nr: u32,
    kind: u8,
}

// SAFETY: The list only holds pointers to slabs, which are `Send`; it is only reached
// under its node's lock.
unsafe impl Send for PartialList {}

impl PartialList {
    /// Number of slabs on the list.
    pub(crate) fn len(&self) -> u32 {
        self.nr
    }

    /// The first slab, if any.
    pub(crate) fn first(&self) -> Option<*mut Slab> {
        (!self.head.is_null()).then_some(self.head)
    }

    /// The first slab for which `f` holds, if any.
    pub(crate) fn find(&self, mut f: impl FnMut(&Slab) -> bool) -> Option<*mut Slab> {
        let mut p = self.head;
        while !p.is_null() {
            // SAFETY: `p` is a live slab on this list (invariant); the caller holds the
            // node lock (it has `&self` through the guard), so its links are stable.
            let s = unsafe { &*p };
            if f(s) {
                return Some(p);
            }
            // SAFETY: As above.
            p = unsafe { s.links().next };
        }
        None
    }

    /// Adds `slab` at the head (`to_head`) or the tail.
    ///
    /// # Safety
    ///
    /// `slab` must be a live slab of this node that is on no list; the caller holds the
    /// node lock (it has `&mut self` through the guard).
    pub(crate) unsafe fn add(&mut self, slab: *mut Slab, to_head: bool) {
        // SAFETY: The node lock is held (caller), `slab` is live.
        let l = unsafe { (*slab).links() };
        debug_assert!(l.on == ON_NO_LIST);
        l.on = self.kind;
        if to_head {
            l.prev = ptr::null_mut();
            l.next = self.head;
            if self.head.is_null() {
                self.tail = slab;
            } else {
                // SAFETY: `head` is a live slab on this list (invariant); lock held.
                unsafe { (*self.head).links().prev = slab };
            }
            self.head = slab;
        } else {
            l.next = ptr::null_mut();
            l.prev = self.tail;
            if self.tail.is_null() {
                self.head = slab;
            } else {
                // SAFETY: `tail` is a live slab on this list (invariant); lock held.
                unsafe { (*self.tail).links().next = slab };
            }
            self.tail = slab;
        }
        // INVARIANT: `slab` is linked at one end and marked; `nr` counts it.
        self.nr += 1;
    }

    /// Removes `slab` from the list.
    ///
    /// # Safety
    ///
    /// `slab` must be on this list; the caller holds the node lock.
    pub(crate) unsafe fn remove(&mut self, slab: *mut Slab) {
        // SAFETY: The node lock is held, `slab` is on the list, hence live.
        let l = unsafe { (*slab).links() };
        debug_assert!(l.on == self.kind);
        let (prev, next) = (l.prev, l.next);
        l.on = ON_NO_LIST;
        l.prev = ptr::null_mut();
        l.next = ptr::null_mut();
        if prev.is_null() {
            self.head = next;
        } else {
            // SAFETY: `prev` is a live slab on this list; lock held.
            unsafe { (*prev).links().next = next };
        }
        if next.is_null() {
            self.tail = prev;
        } else {
            // SAFETY: `next` is a live slab on this list; lock held.
            unsafe { (*next).links().prev = prev };
        }
        // INVARIANT: `slab` is unlinked and unmarked; its neighbours point at each other.
        self.nr -= 1;
    }

    /// Whether `slab` is on this list.
    ///
    /// # Safety
    ///
    /// `slab` must be a live slab of this node; the caller holds the node lock.
    pub(crate) unsafe fn contains(&self, slab: *mut Slab) -> bool {
        // SAFETY: As the caller guarantees.
        unsafe { (*slab).links().on == self.kind }
    }

    /// An empty list of `kind`.
    const fn new(kind: u8) -> Self {
        Self {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            nr: 0,
            kind,
        }
    }
}

/// The lists under a node's lock.
pub(crate) struct Lists {
    partial: PartialList,
    full: PartialList,
}

/// A cache's state on one NUMA node.
#[pin_data]
pub(crate) struct Node {
    /// The lists; taken only with interrupts off (frees may come from interrupts).
    #[pin]
    partial: SpinLock<Lists>,
    /// `partial.len()`, readable without the lock (a hint, as SLUB's `nr_partial`).
    nr_partial: Atomic<u32>,
    /// Slabs of the cache on this node.
    nr_slabs: Atomic<i64>,
    /// Objects in those slabs.
    total_objects: Atomic<i64>,
    /// Pages of those slabs (a slab of the fallback order has fewer than the cache's).
    nr_pages: Atomic<i64>,
}

impl Node {
    /// A node with no slabs.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            partial <- new_spinlock!(
                Lists {
                    partial: PartialList::new(ON_PARTIAL),
                    full: PartialList::new(ON_FULL),
                },
                "rslub_node_partial"
            ),
            nr_partial: Atomic::new(0),
            nr_slabs: Atomic::new(0),
            total_objects: Atomic::new(0),
            nr_pages: Atomic::new(0),
        })
    }

    /// Takes the node lock. Interrupts must be off (the token proves it), since frees from
    /// interrupt context take it too.
    pub(crate) fn lock<'a>(&'a self, _irq: &'a IrqDisabled) -> NodeGuard<'a> {
        NodeGuard {
            guard: self.partial.lock(),
            node: self,
        }
    }

    /// Takes the node lock if it is free at once. Interrupts must be off, as for
    /// [`Node::lock`].
    pub(crate) fn try_lock<'a>(&'a self, _irq: &'a IrqDisabled) -> Option<NodeGuard<'a>> {
        Some(NodeGuard {
            guard: self.partial.try_lock()?,
            node: self,
        })
    }

    /// Partial slabs, read without the lock (may be stale).
    pub(crate) fn nr_partial(&self) -> u32 {
        arch::load_relaxed(&self.nr_partial)
    }

    /// Accounts a new slab of `objects` objects in `pages` pages.
    pub(crate) fn slab_added(&self, objects: u32, pages: u64) {
        self.nr_slabs.add(1, Relaxed);
        self.total_objects.add(i64::from(objects), Relaxed);
        self.nr_pages.add(pages as i64, Relaxed);
    }

    /// Accounts a slab of `objects` objects in `pages` pages given back to the page
    /// allocator.
    pub(crate) fn slab_removed(&self, objects: u32, pages: u64) {
        self.nr_slabs.add(-1, Relaxed);
        self.total_objects.add(-i64::from(objects), Relaxed);
        self.nr_pages.add(-(pages as i64), Relaxed);
    }

    /// Slabs on this node.
    pub(crate) fn nr_slabs(&self) -> i64 {
        arch::load_relaxed(&self.nr_slabs)
    }

    /// Objects in the slabs of this node.
    pub(crate) fn total_objects(&self) -> i64 {
        arch::load_relaxed(&self.total_objects)
    }

    /// Pages of the slabs of this node.
    pub(crate) fn nr_pages(&self) -> i64 {
        arch::load_relaxed(&self.nr_pages)
    }
}

/// The node lock held; gives the lists and keeps the unlocked count in step.
pub(crate) struct NodeGuard<'a> {
    guard: SpinLockGuard<'a, Lists>,
    node: &'a Node,
}

impl NodeGuard<'_> {
    /// The partial list.
    pub(crate) fn list(&mut self) -> &mut PartialList {
        &mut self.guard.partial
    }

    /// The full list (kept for debug caches only).
    pub(crate) fn full(&mut self) -> &mut PartialList {
        &mut self.guard.full
    }
}

impl Drop for NodeGuard<'_> {
    fn drop(&mut self) {
        self.node
            .nr_partial
            .store(self.guard.partial.len(), Relaxed);
    }
}
