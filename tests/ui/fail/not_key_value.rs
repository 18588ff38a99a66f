#[kase::test(exhaustive)]
fn bare_word() {}

fn main() {}
