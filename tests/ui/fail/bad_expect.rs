#[kase::test(expect = "crash")]
fn unknown_failure_kind() {}

#[kase::test(expect = "datarace")]
fn misspelt_kind() {}

fn main() {}
