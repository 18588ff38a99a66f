//! Benchmark programs for kase, with their known numbers of Mazurkiewicz
//! traces, and the same programs for loom and shuttle.
//!
//! The programs live in one source file (`src/programs.rs`) that is
//! included three times: in [`kase_models`] against `kase::sync` /
//! `kase::thread`, in [`loom_models`] against loom's, and in
//! [`shuttle_models`] against shuttle's. Each function is the body of one
//! execution, e.g. `kase::Builder::new().explore(|| mutex_counter(3, 2))`.
//! [`catalog`] lists them with their expected trace counts and the
//! parameters the comparison binary (`compare`) runs.
//!
//! The weak-memory programs (litmus tests and ordering bugs,
//! `src/weak_programs.rs`) are included the same way, in the `weak`
//! submodule of each: [`kase_models::weak`] (run them with
//! `MemoryModel::Rc11`), [`loom_models::weak`], [`shuttle_models::weak`];
//! [`catalog::WEAK_PROGRAMS`] says which outcome of each is the weak one.

pub mod catalog;
pub mod real_crates;

/// The benchmark programs on kase's shims.
pub mod kase_models {
    use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use kase::sync::{Arc, Mutex, RwLock};
    use kase::thread;

    include!("programs.rs");

    /// The weak-memory programs on kase's shims (run them with
    /// `kase::Builder::new().memory_model(kase::MemoryModel::Rc11)`).
    pub mod weak {
        use kase::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use kase::sync::Arc;
        use kase::thread;

        include!("weak_programs.rs");
    }
}

/// The benchmark programs on loom's shims (run them inside `loom::model`).
pub mod loom_models {
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use loom::sync::{Arc, Mutex, RwLock};
    use loom::thread;

    include!("programs.rs");

    /// The weak-memory programs on loom's shims (run them inside
    /// `loom::model`, which explores loom's own weak-memory model).
    pub mod weak {
        use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use loom::sync::Arc;
        use loom::thread;

        include!("weak_programs.rs");
    }
}

/// The benchmark programs on shuttle's shims (run them inside
/// `shuttle::check_dfs`).
pub mod shuttle_models {
    use shuttle::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use shuttle::sync::{Arc, Mutex, RwLock};
    use shuttle::thread;

    include!("programs.rs");

    /// The weak-memory programs on shuttle's shims (run them inside
    /// `shuttle::check_dfs`; shuttle runs every ordering as `SeqCst`).
    pub mod weak {
        use shuttle::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use shuttle::sync::Arc;
        use shuttle::thread;

        include!("weak_programs.rs");
    }
}

/// The fastest of `repeat` runs of `f`: what it returned (the executions it
/// ran) and how long it took.
pub fn fastest_of(repeat: usize, mut f: impl FnMut() -> u64) -> (u64, std::time::Duration) {
    (0..repeat)
        .map(|_| {
            let start = std::time::Instant::now();
            let executions = f();
            (executions, start.elapsed())
        })
        .min_by_key(|&(_, time)| time)
        .expect("at least one run")
}

/// `text` (a markdown file) with its section under `heading` (a `## `
/// line) replaced by `section`, or `section` appended if it has none; the
/// sections after it stay (several binaries write their own sections of
/// BENCHMARKS.md).
pub fn replace_section(text: &str, heading: &str, section: &str) -> String {
    let start = if text.starts_with(heading) {
        Some(0)
    } else {
        text.find(&format!("\n{heading}")).map(|i| i + 1)
    };
    let Some(start) = start else {
        let mut out = text.trim_end().to_string();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(section);
        return out;
    };
    let rest = &text[start + heading.len()..];
    let end = rest
        .find("\n## ")
        .map_or(text.len(), |i| start + heading.len() + i + 1);
    let mut out = text[..start].to_string();
    out.push_str(section.trim_end());
    out.push('\n');
    if end < text.len() {
        out.push('\n');
        out.push_str(&text[end..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::replace_section;

    #[test]
    fn a_section_is_replaced_in_place_or_appended() {
        let text = "# T\n\nintro\n\n## A\n\nold a\n\n## B\n\nold b\n";
        assert_eq!(
            replace_section(text, "## A", "## A\n\nnew a\n"),
            "# T\n\nintro\n\n## A\n\nnew a\n\n## B\n\nold b\n"
        );
        assert_eq!(
            replace_section(text, "## B", "## B\n\nnew b\n"),
            "# T\n\nintro\n\n## A\n\nold a\n\n## B\n\nnew b\n"
        );
        assert_eq!(
            replace_section(text, "## C", "## C\n\nc\n"),
            "# T\n\nintro\n\n## A\n\nold a\n\n## B\n\nold b\n\n## C\n\nc\n"
        );
    }
}
