// An alias of a std module declared outside the test (`use std::sync as
// s;` at module level) cannot be rewritten by the attribute, which sees only
// the function: the body would run on real std and pass silently. It gets a
// note (a `deprecated` warning, denied here so that trybuild shows it).
#![deny(deprecated)]

use std::sync as s;

#[kase::test]
fn through_a_module_level_alias() {
    let n = s::atomic::AtomicUsize::new(0);
    n.fetch_add(1, s::atomic::Ordering::SeqCst);
}

fn main() {}
