//! A fingerprint of a model thread's own state at a yield: its stack and
//! the registers its caller keeps across a call, hashed.
//!
//! The spin rule (`spin/mod.rs`) lets a yielding thread wait only when it
//! is back in a state it was in at an earlier yield. What the thread will
//! do next is a function of that state and of the values it reads, so an
//! equal fingerprint plus equal reads means the iteration would repeat
//! itself exactly. A loop counter, a backoff step or a retry budget lives
//! in a stack slot or a callee-saved register, so it makes the fingerprints
//! differ and the loop is explored iteration by iteration.
//!
//! What it cannot see: state the thread keeps only on the heap (a counter
//! behind a `Box` it alone uses) or in an OS thread-local; see the guide's
//! chapter on spin loops.
//!
//! The capture is a naked function called directly from the yielding
//! user frame (the shims calling it are `#[inline(always)]`): it stores the
//! callee-saved registers, the caller's stack pointer and its return
//! address, so nothing of kase's own frames enters the fingerprint. On
//! targets without a capture routine the fingerprint is the yield's source
//! location only, which treats every loop as free of local state (the rule
//! of kase 0.1; documented as such).

use std::panic::Location;

/// The state a yielding frame keeps outside its stack, captured at the
/// call (see [`CallerState::capture`]).
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct CallerState {
    words: [u64; WORDS],
}

#[cfg(all(target_arch = "x86_64", not(windows)))]
const WORDS: usize = 8;
#[cfg(all(target_arch = "x86_64", not(windows)))]
const SP: usize = 6;

#[cfg(target_arch = "aarch64")]
const WORDS: usize = 21;
#[cfg(target_arch = "aarch64")]
const SP: usize = 20;

#[cfg(not(any(all(target_arch = "x86_64", not(windows)), target_arch = "aarch64")))]
const WORDS: usize = 0;

/// Stores rbx, rbp, r12–r15 (callee-saved under the System V ABI), the
/// caller's stack pointer after the return and the return address.
#[cfg(all(target_arch = "x86_64", not(windows)))]
#[unsafe(naked)]
extern "C" fn capture_into(out: *mut CallerState) {
    core::arch::naked_asm!(
        "mov qword ptr [rdi], rbx",
        "mov qword ptr [rdi + 8], rbp",
        "mov qword ptr [rdi + 16], r12",
        "mov qword ptr [rdi + 24], r13",
        "mov qword ptr [rdi + 32], r14",
        "mov qword ptr [rdi + 40], r15",
        "lea rax, [rsp + 8]",
        "mov qword ptr [rdi + 48], rax",
        "mov rax, qword ptr [rsp]",
        "mov qword ptr [rdi + 56], rax",
        "ret",
    )
}

/// Stores x19–x28, the frame pointer, the link register (the return
/// address), d8–d15 (callee-saved under AAPCS64) and the stack pointer.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
extern "C" fn capture_into(out: *mut CallerState) {
    core::arch::naked_asm!(
        "stp x19, x20, [x0]",
        "stp x21, x22, [x0, #16]",
        "stp x23, x24, [x0, #32]",
        "stp x25, x26, [x0, #48]",
        "stp x27, x28, [x0, #64]",
        "stp x29, x30, [x0, #80]",
        "stp d8, d9, [x0, #96]",
        "stp d10, d11, [x0, #112]",
        "stp d12, d13, [x0, #128]",
        "stp d14, d15, [x0, #144]",
        "mov x9, sp",
        "str x9, [x0, #160]",
        "ret",
    )
}

/// Stacks deeper than this are not hashed (the fingerprint falls back to
/// the location): a guard against a bad stack top, not a real limit.
const MAX_HASHED: usize = 64 << 20;

impl CallerState {
    /// Captures the calling frame's state. Call it from an
    /// `#[inline(always)]` shim, so that the caller is the user's frame.
    #[inline(always)]
    pub(crate) fn capture() -> Self {
        let mut state = CallerState::default();
        #[cfg(any(all(target_arch = "x86_64", not(windows)), target_arch = "aarch64"))]
        capture_into(&mut state);
        state
    }

    /// The fingerprint of the captured frame's thread: the captured words
    /// and the stack from the caller's frame up to `stack_top` (the
    /// outermost frame of the thread's body), with the yield's `location`.
    pub(crate) fn fingerprint(
        &self,
        stack_top: usize,
        location: &'static Location<'static>,
    ) -> u64 {
        let mut h = Hasher::default();
        h.word(location as *const Location<'static> as u64);
        for &w in &self.words {
            h.word(w);
        }
        #[cfg(any(all(target_arch = "x86_64", not(windows)), target_arch = "aarch64"))]
        {
            let sp = self.words[SP] as usize;
            let top = stack_top & !7;
            if sp % 8 == 0 && sp < top && top - sp <= MAX_HASHED {
                // SAFETY: [sp, top) is this OS thread's current stack
                // between the yielding frame and the thread body's
                // outermost frame, both live (we are called from the
                // former, inside the latter): mapped, readable, 8-byte
                // aligned, `top - sp` bytes.
                unsafe { h.stack(sp as *const u64, (top - sp) / 8) };
            }
        }
        #[cfg(not(any(all(target_arch = "x86_64", not(windows)), target_arch = "aarch64")))]
        let _ = stack_top;
        h.finish()
    }
}

/// A small multiplicative hash over words (collisions only make a thread
/// wait where it should not if two different states collide, with
/// probability ~2^-64 per pair).
#[derive(Default)]
struct Hasher(u64);

const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher {
    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(MULTIPLIER);
    }

    /// Hashes `len` words from `at` in four independent lanes, folded in
    /// at the end: a stack is hundreds of words, and one chain of
    /// multiplications would wait on each in turn.
    ///
    /// # Safety
    ///
    /// `[at, at + len)` is mapped, readable and aligned for `u64`. The
    /// words are read volatile: they belong to other frames (some never
    /// initialised), so they are treated as raw memory, as a conservative
    /// stack scanner does, and no reference to them is formed.
    #[cfg_attr(
        not(any(all(target_arch = "x86_64", not(windows)), target_arch = "aarch64")),
        allow(dead_code)
    )]
    unsafe fn stack(&mut self, at: *const u64, len: usize) {
        let mut lanes = [1u64, 2, 3, 4];
        let read = |i: usize| {
            // SAFETY: `i < len` (the callers below), the caller's promise.
            unsafe { std::ptr::read_volatile(at.add(i)) }
        };
        let whole = len - len % 4;
        for i in (0..whole).step_by(4) {
            for (lane, hash) in lanes.iter_mut().enumerate() {
                *hash = (hash.rotate_left(5) ^ read(i + lane)).wrapping_mul(MULTIPLIER);
            }
        }
        for i in whole..len {
            self.word(read(i));
        }
        self.word(len as u64);
        for hash in lanes {
            self.word(hash);
        }
    }

    fn finish(&self) -> u64 {
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[inline(never)]
    fn at(top: usize, counter: u64, location: &'static Location<'static>) -> u64 {
        let state = CallerState::capture();
        let fp = state.fingerprint(top, location);
        // Keep the counter alive across the capture, so that it sits in a
        // callee-saved register or a stack slot of this frame.
        std::hint::black_box(counter);
        fp
    }

    /// Out of line, so that the loops below keep no copy of the log's length
    /// (which would be loop state, as it would in a real loop).
    #[inline(never)]
    fn record(log: &RefCell<Vec<u64>>, fp: u64) {
        log.borrow_mut().push(fp);
    }

    #[inline(never)]
    fn done(log: &RefCell<Vec<u64>>) -> bool {
        log.borrow().len() >= 3
    }

    /// Passes through one loop whose only changing state is on the heap
    /// (like a spin loop), then through one that counts. The first pass of
    /// each may differ: registers and stack slots can still hold what the
    /// code before the loop left there.
    #[test]
    fn a_repeated_state_has_one_fingerprint_and_a_counter_changes_it() {
        let marker = 0u64;
        let top = std::ptr::addr_of!(marker) as usize;
        let here = Location::caller();
        let log = Box::new(RefCell::new(Vec::new()));
        while !done(&log) {
            record(&log, at(top, 7, here));
        }
        let log = log.into_inner();
        assert_eq!(log[1], log[2], "the same loop state");

        let counted = Box::new(RefCell::new(Vec::new()));
        let mut i = 0u64;
        while !done(&counted) {
            record(&counted, at(top, i, here));
            i += 1;
        }
        let counted = counted.into_inner();
        if WORDS > 0 {
            assert_ne!(counted[1], counted[2], "a different counter");
        }
        std::hint::black_box(&marker);
    }
}
