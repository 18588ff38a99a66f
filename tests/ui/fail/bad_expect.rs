#[kase::test(expect = "crash")]
fn unknown_failure_kind() {}

#[kase::test(expect = "data race")]
fn not_detected_yet() {}

fn main() {}
