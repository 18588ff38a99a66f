//! A lock-free Treiber stack: the naive `pop` reads a node another thread
//! may already have freed; the fixed one frees a node only when no other
//! thread can still be looking at it.
//!
//! The stack is ordinary `std` code (`AtomicPtr`, `UnsafeCell`).
//! `#[kase::instrument]` on its module rewrites those paths onto kase's
//! shims, and `UnsafeCell`'s `with` / `with_mut` (loom's names; kase's cell
//! has them, std's does not) make every access to a node's fields an access
//! kase checks against happens-before: reading a node that another thread
//! freed without synchronising with the reader is a **data race**.
//!
//! Run the models and print kase's report:
//!
//! ```sh
//! cargo run --example treiber_stack
//! ```
//!
//! or run them as tests (the buggy one passes because it *expects* the data
//! race):
//!
//! ```sh
//! cargo test --example treiber_stack
//! ```

use std::process::ExitCode;

use kase::FailureKind;

// `run`: explores one model and prints kase's report (shared by the examples).
mod common;
use common::run;

/// Where freed nodes go (it stands in for the allocator).
///
/// Really deallocating a node that another thread is still reading would
/// be undefined behaviour in the model run itself, so `Stack::free`
/// overwrites the node's fields with tracked writes, the way an allocator
/// reusing the memory would, and parks the allocation here until the stack
/// is dropped. This type is deliberately outside the instrumented module:
/// like the real allocator it is not part of the code under test, and its
/// `std` mutex adds no synchronisation kase would see.
struct Graveyard<N>(std::sync::Mutex<Vec<Box<N>>>);

impl<N> Graveyard<N> {
    fn new() -> Self {
        Graveyard(std::sync::Mutex::new(Vec::new()))
    }

    fn bury(&self, node: Box<N>) {
        self.0.lock().unwrap().push(node);
    }
}

#[kase::instrument]
mod treiber {
    use std::cell::UnsafeCell;
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::thread;

    use super::Graveyard;

    struct Node<T> {
        value: UnsafeCell<Option<T>>,
        next: UnsafeCell<*mut Node<T>>,
        /// Links the nodes waiting to be freed (fixed `pop` only). A field
        /// of its own: reusing `next` for it, as some textbook versions do,
        /// writes a field that a thread still in `pop` may be reading.
        next_retired: UnsafeCell<*mut Node<T>>,
    }

    /// A Treiber stack: a singly linked list whose head is swapped with
    /// compare-and-swap. Every atomic operation is `SeqCst`.
    pub struct Stack<T> {
        head: AtomicPtr<Node<T>>,
        /// How many threads are inside [`Stack::pop`].
        threads_in_pop: AtomicUsize,
        /// Popped nodes that another thread in `pop` might still read.
        retired: AtomicPtr<Node<T>>,
        graveyard: Graveyard<Node<T>>,
    }

    // SAFETY: values of type `T` move between threads through the stack
    // (hence `T: Send`), and the nodes are only reached through the atomics
    // and the cells, whose accesses kase checks.
    unsafe impl<T: Send> Send for Stack<T> {}
    // SAFETY: as above; `&Stack` only pushes and pops.
    unsafe impl<T: Send> Sync for Stack<T> {}

    impl<T> Stack<T> {
        pub fn new() -> Self {
            Stack {
                head: AtomicPtr::new(ptr::null_mut()),
                threads_in_pop: AtomicUsize::new(0),
                retired: AtomicPtr::new(ptr::null_mut()),
                graveyard: Graveyard::new(),
            }
        }

        pub fn push(&self, value: T) {
            let node = Box::into_raw(Box::new(Node {
                value: UnsafeCell::new(Some(value)),
                next: UnsafeCell::new(ptr::null_mut()),
                next_retired: UnsafeCell::new(ptr::null_mut()),
            }));
            let mut head = self.head.load(SeqCst);
            loop {
                // SAFETY: `node` is ours until the compare-exchange publishes it.
                unsafe { (*node).next.with_mut(|next| *next = head) };
                match self.head.compare_exchange(head, node, SeqCst, SeqCst) {
                    Ok(_) => return,
                    Err(current) => head = current,
                }
            }
        }

        /// The textbook `pop`, with the textbook bug: between loading `head`
        /// and reading `(*head).next`, another thread may pop `head` and
        /// free it.
        pub fn pop_naive(&self) -> Option<T> {
            loop {
                let head = self.head.load(SeqCst);
                if head.is_null() {
                    return None;
                }
                // SAFETY: none: `head` may have been freed by now. (In this
                // example a freed node stays allocated, so the read itself is
                // defined; kase reports it as a data race with the free.)
                let next = unsafe { (*head).next.with(|next| *next) };
                if self
                    .head
                    .compare_exchange(head, next, SeqCst, SeqCst)
                    .is_ok()
                {
                    // SAFETY: the compare-exchange unlinked `head`: it is ours.
                    let value = unsafe { (*head).value.with_mut(|value| (*value).take()) };
                    // SAFETY: as above.
                    unsafe { self.free(head) };
                    return value;
                }
            }
        }

        /// `pop` that frees a node only when no other thread is inside
        /// `pop` (the "threads in pop" scheme of *C++ Concurrency in
        /// Action*, 7.2.2): a node popped while others are in `pop` is
        /// retired, and freed by the last thread to leave.
        pub fn pop(&self) -> Option<T> {
            self.threads_in_pop.fetch_add(1, SeqCst);
            let mut head = self.head.load(SeqCst);
            loop {
                if head.is_null() {
                    self.threads_in_pop.fetch_sub(1, SeqCst);
                    return None;
                }
                // SAFETY: we are counted in `threads_in_pop`, so nobody frees
                // `head` before we leave `pop`.
                let next = unsafe { (*head).next.with(|next| *next) };
                match self.head.compare_exchange(head, next, SeqCst, SeqCst) {
                    Ok(_) => break,
                    Err(current) => head = current,
                }
            }
            // SAFETY: the compare-exchange unlinked `head`: it is ours.
            let value = unsafe { (*head).value.with_mut(|value| (*value).take()) };
            // SAFETY: as above.
            unsafe { self.try_reclaim(head) };
            value
        }

        /// Frees `node`, and the retired nodes, if no other thread can
        /// still read them; otherwise retires `node`. Leaves `pop`.
        ///
        /// # Safety
        ///
        /// `node` was unlinked by this thread, which is counted in
        /// `threads_in_pop`.
        unsafe fn try_reclaim(&self, node: *mut Node<T>) {
            if self.threads_in_pop.load(SeqCst) == 1 {
                // Alone in `pop`: a thread that enters now loads a head
                // after `node` was unlinked, so no one else can hold `node`.
                let retired = self.retired.swap(ptr::null_mut(), SeqCst);
                if self.threads_in_pop.fetch_sub(1, SeqCst) == 1 {
                    // Still alone when leaving: nobody holds the retired
                    // nodes either.
                    // SAFETY: we took the whole list; nobody else reads it.
                    unsafe { self.free_list(retired) };
                } else if !retired.is_null() {
                    // Someone entered meanwhile and may hold one: put them back.
                    // SAFETY: we took the whole list; it is ours to relink.
                    unsafe { self.retire(retired) };
                }
                // SAFETY: nobody else can hold `node` (see above).
                unsafe { self.free(node) };
            } else {
                // SAFETY: `node` is unlinked and ours.
                unsafe { self.retire(node) };
                self.threads_in_pop.fetch_sub(1, SeqCst);
            }
        }

        /// Pushes the list of nodes starting at `first` (linked through
        /// `next_retired`) onto `retired`.
        ///
        /// # Safety
        ///
        /// The list is unlinked from the stack and owned by this thread.
        unsafe fn retire(&self, first: *mut Node<T>) {
            let mut last = first;
            loop {
                // SAFETY: the nodes of the list are ours (see above).
                let next = unsafe { (*last).next_retired.with(|n| *n) };
                if next.is_null() {
                    break;
                }
                last = next;
            }
            let mut old = self.retired.load(SeqCst);
            loop {
                // SAFETY: as above.
                unsafe { (*last).next_retired.with_mut(|n| *n = old) };
                match self.retired.compare_exchange(old, first, SeqCst, SeqCst) {
                    Ok(_) => return,
                    Err(current) => old = current,
                }
            }
        }

        /// Frees every node of the list starting at `node`.
        ///
        /// # Safety
        ///
        /// As [`Stack::free`], for each node of the list.
        unsafe fn free_list(&self, mut node: *mut Node<T>) {
            while !node.is_null() {
                // SAFETY: the caller owns the list.
                let next = unsafe { (*node).next_retired.with(|n| *n) };
                // SAFETY: as above.
                unsafe { self.free(node) };
                node = next;
            }
        }

        /// Frees `node` (see [`Graveyard`]): overwrites its fields, as an
        /// allocator reusing the memory would, and hands it over.
        ///
        /// # Safety
        ///
        /// `node` came from `push`, is unlinked, and no thread may read it
        /// any more.
        unsafe fn free(&self, node: *mut Node<T>) {
            // SAFETY: the caller promises nobody else reads `node`.
            unsafe {
                (*node).value.with_mut(|value| *value = None);
                (*node).next.with_mut(|next| *next = ptr::null_mut());
                (*node).next_retired.with_mut(|n| *n = ptr::null_mut());
                self.graveyard.bury(Box::from_raw(node));
            }
        }
    }

    impl<T> Drop for Stack<T> {
        fn drop(&mut self) {
            // `&mut self`: no other thread uses the stack. Free what is
            // still on it, then what is still retired (the graveyard frees
            // the rest).
            let mut node = self.head.load(SeqCst);
            while !node.is_null() {
                // SAFETY: every node on the stack came from `Box::into_raw`.
                let boxed = unsafe { Box::from_raw(node) };
                // SAFETY: a plain read of a pointer we own.
                node = boxed.next.with(|next| unsafe { *next });
            }
            let mut node = self.retired.load(SeqCst);
            while !node.is_null() {
                // SAFETY: as above, for the retired nodes.
                let boxed = unsafe { Box::from_raw(node) };
                // SAFETY: a plain read of a pointer we own.
                node = boxed.next_retired.with(|next| unsafe { *next });
            }
        }
    }

    /// Two threads pop from a stack of two values at the same time, with
    /// the naive `pop`.
    pub fn naive_pops() {
        let stack = Arc::new(Stack::new());
        stack.push(1);
        stack.push(2);
        let other = stack.clone();
        let t = thread::spawn(move || other.pop_naive());
        let mine = stack.pop_naive();
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs, "a value was popped twice");
    }

    /// Two threads pop while the main thread pushes, with the fixed `pop`;
    /// then the main thread empties the stack: every value comes out
    /// exactly once.
    pub fn counted_pops() {
        let stack = Arc::new(Stack::new());
        stack.push(1);
        stack.push(2);
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let stack = stack.clone();
                thread::spawn(move || stack.pop())
            })
            .collect();
        stack.push(3);
        let mut values: Vec<i32> = poppers
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        while let Some(v) = stack.pop() {
            values.push(v);
        }
        values.sort();
        assert_eq!(values, [1, 2, 3], "values lost or duplicated");
    }
}

fn main() -> ExitCode {
    let ok = run(
        "naive pop: reads a node another thread freed",
        Some(FailureKind::DataRace),
        treiber::naive_pops,
    ) & run(
        "fixed pop: frees only when no other thread is in pop",
        None,
        treiber::counted_pops,
    );
    common::exit_code(ok)
}

#[cfg(test)]
mod tests {
    use super::treiber;

    #[kase::test(expect = "data race")]
    fn naive_pop_reads_a_freed_node() {
        treiber::naive_pops();
    }

    #[kase::test]
    fn counted_pop_is_race_free() {
        treiber::counted_pops();
    }
}
