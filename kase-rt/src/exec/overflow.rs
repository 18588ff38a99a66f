//! Stack overflow in a model thread.
//!
//! Model threads run on coroutine stacks kase allocates (`stack_size`,
//! default 2 MiB), each with a guard page below it. Overflowing one faults
//! on that guard page: std's own handler does not know these stacks, so
//! without help the process dies of a bare `SIGSEGV`. On Linux kase installs
//! (once per process) a `SIGSEGV`/`SIGBUS` handler that runs on an
//! alternate signal stack, recognises a fault in the guard page of a
//! registered model-thread stack, writes which thread overflowed a stack of
//! how many bytes and which knob raises it (with `write(2)`, which is
//! async-signal-safe), and aborts. Any other fault goes to the handler that
//! was installed before (std's, which reports overflows of OS-thread
//! stacks), or to the default action.
//!
//! The guard pages are kept in a fixed table of atomics so that the handler
//! reads them without locks or allocation. Elsewhere than Linux nothing is
//! installed and an overflow ends the process as before.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// How many stacks can be registered at once; a stack allocated when the
/// table is full still works, its overflow is only not explained.
const SLOTS: usize = 1024;

/// `hi` of a slot being filled in (not yet readable).
const CLAIMED: usize = usize::MAX;

/// One registered guard page `[lo, hi)`: `hi == 0` is a free slot.
struct Slot {
    lo: AtomicUsize,
    hi: AtomicUsize,
    /// The usable size of the stack, as configured.
    size: AtomicUsize,
    /// The model thread (its `ThreadIdx`) running on the stack.
    thread: AtomicU32,
}

#[allow(clippy::declare_interior_mutable_const)] // each array element is a fresh slot
const FREE: Slot = Slot {
    lo: AtomicUsize::new(0),
    hi: AtomicUsize::new(0),
    size: AtomicUsize::new(0),
    thread: AtomicU32::new(0),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

/// A stack's entry in the table, removed when dropped.
#[derive(Debug)]
pub(crate) struct Registration(Option<usize>);

impl Registration {
    /// Registers the guard page of a stack whose lowest address (the
    /// start of its guard page) is `limit`, of `size` usable bytes, and
    /// (once per process) installs the handler.
    pub(crate) fn new(limit: usize, size: usize) -> Self {
        imp::install();
        Self::range(limit, limit.saturating_add(imp::page_size()), size)
    }

    /// Registers the guard page `[lo, hi)`.
    fn range(lo: usize, hi: usize, size: usize) -> Self {
        if lo >= hi {
            return Registration(None);
        }
        for (i, slot) in TABLE.iter().enumerate() {
            if slot
                .hi
                .compare_exchange(0, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                slot.lo.store(lo, Ordering::Relaxed);
                slot.size.store(size, Ordering::Relaxed);
                slot.thread.store(0, Ordering::Relaxed);
                slot.hi.store(hi, Ordering::Release);
                return Registration(Some(i));
            }
        }
        Registration(None)
    }

    /// Records that model thread `thread` now runs on the stack.
    pub(crate) fn set_thread(&self, thread: u32) {
        if let Some(i) = self.0 {
            TABLE[i].thread.store(thread, Ordering::Relaxed);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            TABLE[i].hi.store(0, Ordering::Release);
        }
    }
}

/// The thread and stack size of the registered guard page containing
/// `addr`, if any. Lock-free and allocation-free: called from the signal
/// handler.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only the Linux handler reads it
fn lookup(addr: usize) -> Option<(u32, usize)> {
    TABLE.iter().find_map(|slot| {
        let hi = slot.hi.load(Ordering::Acquire);
        if hi == 0 || hi == CLAIMED {
            return None;
        }
        let lo = slot.lo.load(Ordering::Relaxed);
        (lo <= addr && addr < hi).then(|| {
            (
                slot.thread.load(Ordering::Relaxed),
                slot.size.load(Ordering::Relaxed),
            )
        })
    })
}

/// A `fmt::Write` into a fixed buffer (no allocation: usable in a signal
/// handler); what does not fit is cut.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only the Linux handler reads it
struct Buffer {
    bytes: [u8; 640],
    len: usize,
}

impl std::fmt::Write for Buffer {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// The message for an overflow of `thread`'s stack of `size` bytes.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only the Linux handler reads it
fn message(thread: u32, size: usize) -> Buffer {
    use std::fmt::Write;
    let mut out = Buffer {
        bytes: [0; 640],
        len: 0,
    };
    let _ = out.write_str("\nkase: model thread ");
    let _ = if thread == 0 {
        out.write_str("main")
    } else {
        write!(out, "{thread}")
    };
    let _ = writeln!(
        out,
        " overflowed its stack of {size} bytes (model threads run on stacks kase allocates, \
         default 2 MiB). Raise it with Builder::stack_size(bytes), KASE_STACK_SIZE=<bytes> or \
         #[kase::test(stack_size = <bytes>)]; unbounded recursion overflows any size. Aborting."
    );
    out
}

#[cfg(target_os = "linux")]
mod imp {
    //! The handler and the alternate signal stacks (Linux).

    use std::cell::Cell;
    use std::sync::{Once, OnceLock};

    /// The actions installed before ours for `SIGSEGV` and `SIGBUS`.
    struct Previous {
        segv: libc::sigaction,
        bus: libc::sigaction,
    }

    // SAFETY: plain data (handler addresses, a signal mask, flags), only
    // read after it is published through the `OnceLock`.
    unsafe impl Sync for Previous {}
    // SAFETY: as above.
    unsafe impl Send for Previous {}

    static PREVIOUS: OnceLock<Previous> = OnceLock::new();

    /// A `SA_SIGINFO` handler.
    type SigInfoHandler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

    /// The size of the guard page corosensei puts below each stack.
    pub(super) fn page_size() -> usize {
        // SAFETY: `sysconf` has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size).unwrap_or(4096)
    }

    /// Installs the handler once per process, and makes sure the calling
    /// thread (the one that will run model threads) has an alternate signal
    /// stack: the handler cannot run on the stack that just overflowed.
    pub(super) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: `sigaction` with a zeroed (empty-mask) action whose
            // handler has the `SA_SIGINFO` signature; the previous actions
            // are written to locals we own.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as SigInfoHandler as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut segv: libc::sigaction = std::mem::zeroed();
                let mut bus: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGSEGV, &action, &mut segv) != 0 {
                    return;
                }
                if libc::sigaction(libc::SIGBUS, &action, &mut bus) != 0 {
                    // Leave SIGBUS as it was; SIGSEGV is the one that matters.
                    bus = std::mem::zeroed();
                    libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut bus);
                }
                let _ = PREVIOUS.set(Previous { segv, bus });
            }
        });
        ensure_altstack();
    }

    /// An alternate signal stack kase mapped for this thread, unmapped when
    /// the thread ends.
    struct AltStack {
        base: *mut libc::c_void,
        len: usize,
    }

    impl Drop for AltStack {
        fn drop(&mut self) {
            // SAFETY: disables the alternate stack of this thread (ours, set
            // by `ensure_altstack`) before unmapping the memory kase mapped.
            unsafe {
                let disable = libc::stack_t {
                    ss_sp: std::ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                libc::sigaltstack(&disable, std::ptr::null_mut());
                libc::munmap(self.base, self.len);
            }
        }
    }

    thread_local! {
        static CHECKED: Cell<bool> = const { Cell::new(false) };
        static ALT: Cell<Option<AltStack>> = const { Cell::new(None) };
    }

    /// Gives the calling thread an alternate signal stack unless it has one
    /// (std gives one to the main thread and the threads it spawns when it
    /// installed its own overflow handler).
    fn ensure_altstack() {
        if CHECKED.with(|c| c.replace(true)) {
            return;
        }
        // SAFETY: queries this thread's alternate stack into a local; maps
        // fresh memory and installs it only if there is none.
        unsafe {
            let mut current: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(std::ptr::null(), &mut current) != 0
                || current.ss_flags & libc::SS_DISABLE == 0
            {
                return;
            }
            let len = 64 * 1024 + libc::SIGSTKSZ;
            let base = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return;
            }
            let stack = libc::stack_t {
                ss_sp: base,
                ss_flags: 0,
                ss_size: len,
            };
            if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
                libc::munmap(base, len);
                return;
            }
            ALT.with(|a| a.set(Some(AltStack { base, len })));
        }
    }

    /// The `SIGSEGV`/`SIGBUS` handler. Only async-signal-safe work: atomic
    /// loads, formatting into a stack buffer, `write`, `abort`, `sigaction`.
    extern "C" fn handler(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid `siginfo_t`. Its address is
        // meaningful only for a fault the kernel raised (`si_code > 0`; a
        // signal sent with `kill` or `raise` has `si_code <= 0`).
        let fault = unsafe { ((*info).si_code > 0).then(|| (*info).si_addr() as usize) };
        if let Some((thread, size)) = fault.and_then(super::lookup) {
            let message = super::message(thread, size);
            // SAFETY: `write` to stderr from a buffer we own, then `abort`;
            // both are async-signal-safe.
            unsafe {
                libc::write(2, message.bytes.as_ptr().cast(), message.len);
                libc::abort();
            }
        }
        // Not a model thread's guard page: what would have happened without
        // kase. SAFETY: the previous action was valid for this signal when
        // it was installed; a `SA_SIGINFO` handler gets our arguments as
        // they came, a plain one the signal number.
        unsafe {
            let previous = PREVIOUS.get().map(|p| {
                if signal == libc::SIGBUS {
                    &p.bus
                } else {
                    &p.segv
                }
            });
            match previous {
                Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
                    if p.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: SigInfoHandler = std::mem::transmute(p.sa_sigaction);
                        f(signal, info, context);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                        f(signal);
                    }
                }
                _ => {
                    // The default action: restore it and return, so that the
                    // faulting instruction runs again and the process ends
                    // as it would have.
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(signal, &default, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    /// Nothing is installed elsewhere than Linux.
    pub(super) fn install() {}

    /// Unused elsewhere than Linux (nothing reads the table).
    pub(super) fn page_size() -> usize {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_pages_are_found_until_unregistered() {
        // Addresses far from any real mapping: only the table is consulted.
        let (lo, hi) = (0x10_0000_0000usize, 0x10_0000_1000usize);
        let r = Registration::range(lo, hi, 65_536);
        r.set_thread(3);
        assert_eq!(lookup(lo), Some((3, 65_536)));
        assert_eq!(lookup(hi - 1), Some((3, 65_536)));
        assert_eq!(lookup(hi), None, "the stack itself is not the guard page");
        assert_eq!(lookup(lo - 1), None);
        drop(r);
        assert_eq!(lookup(lo), None);
    }

    #[test]
    fn the_message_names_the_thread_the_size_and_the_knobs() {
        let m = message(2, 65_536);
        let text = std::str::from_utf8(&m.bytes[..m.len]).unwrap();
        assert!(
            text.contains("model thread 2 overflowed its stack of 65536 bytes"),
            "{text}"
        );
        for knob in ["Builder::stack_size", "KASE_STACK_SIZE", "stack_size = "] {
            assert!(text.contains(knob), "{text}");
        }
        let main = message(0, 1);
        assert!(std::str::from_utf8(&main.bytes[..main.len])
            .unwrap()
            .contains("model thread main "));
    }
}
