//! Panics inside model threads: capture message and location for the report
//! instead of letting the default hook print once per failing execution.

use std::any::Any;
use std::backtrace::BacktraceStatus;
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::sync::Once;

use super::error::InternalError;

/// Where and why a model thread panicked.
#[derive(Clone, Debug)]
pub struct PanicInfo {
    /// The panic message (payload rendered as text).
    pub message: String,
    /// `file:line:column` of the panic, if known.
    pub location: Option<String>,
}

thread_local! {
    static LAST_PANIC: RefCell<Option<PanicInfo>> = const { RefCell::new(None) };
    static IN_COROUTINE: Cell<bool> = const { Cell::new(false) };
    /// An exploration runs on this OS thread: kase's own panics are
    /// recorded (and still printed) so that the report can say where.
    static IN_EXPLORATION: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (an exploration) with the location of kase's own panics
/// recorded for [`take_last`], as well as printed by the previous hook.
pub(crate) fn in_exploration<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            IN_EXPLORATION.with(|c| c.set(self.0));
        }
    }
    install_hook();
    let _reset = Reset(IN_EXPLORATION.with(|c| c.replace(true)));
    f()
}

/// Runs `f` (which resumes a model thread) with panics in it captured rather
/// than printed; panics of kase's own driver code still reach the previous
/// hook.
pub(crate) fn in_coroutine<R>(f: impl FnOnce() -> R) -> R {
    with_in_coroutine(true, f)
}

/// Runs `f` (kase's own code, on a model thread's stack) with its panics
/// treated as kase's, not the model thread's.
pub(crate) fn outside_coroutine<R>(f: impl FnOnce() -> R) -> R {
    with_in_coroutine(false, f)
}

/// Runs `f` with `IN_COROUTINE` set to `value`, restored after (also on
/// unwind).
fn with_in_coroutine<R>(value: bool, f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            IN_COROUTINE.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(IN_COROUTINE.with(|c| c.replace(value)));
    f()
}

/// Installs (once per process) a panic hook that, on an OS thread currently
/// running a model, records the panic instead of printing it. Panics anywhere
/// else go to the hook that was installed before.
pub(crate) fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_coroutine = IN_COROUTINE.with(Cell::get);
            if in_coroutine || IN_EXPLORATION.with(Cell::get) {
                let captured = PanicInfo {
                    message: payload_message(info.payload()),
                    location: info
                        .location()
                        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
                };
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(captured));
            }
            if !in_coroutine {
                match super::error::render(info.payload()) {
                    // std's hook would print kase's typed payload as
                    // `Box<dyn Any>`: print it in the same layout instead.
                    Some(message) => print_like_std(info.location(), &message),
                    None => previous(info),
                }
            }
        }));
    });
}

/// The panic recorded by the hook for the payload just caught, or the payload
/// itself rendered if the hook did not see it (`resume_unwind` skips hooks,
/// so what the hook saw last may be an older, caught panic).
pub(crate) fn take_last(payload: &(dyn Any + Send)) -> PanicInfo {
    let message = payload_message(payload);
    match LAST_PANIC.with(|p| p.borrow_mut().take()) {
        Some(seen) if seen.message == message => seen,
        _ => PanicInfo {
            message,
            // An internal error knows where it was raised.
            location: payload
                .downcast_ref::<InternalError>()
                .map(|e| e.location.to_string()),
        },
    }
}

/// What std's default hook prints for a panic (without the thread's OS id,
/// which std does not expose), for a payload it cannot render.
fn print_like_std(location: Option<&Location<'_>>, message: &str) {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed>");
    let at = location.map(ToString::to_string).unwrap_or_default();
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == BacktraceStatus::Captured {
        eprintln!("\nthread '{name}' panicked at {at}:\n{message}\nstack backtrace:\n{backtrace}");
    } else {
        eprintln!("\nthread '{name}' panicked at {at}:\n{message}");
    }
}

/// Renders a panic payload the way std's hook does, and kase's own errors
/// as their text.
pub fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = super::error::render(payload) {
        message
    } else if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_owned()
    }
}
