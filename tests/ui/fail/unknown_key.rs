#[kase::test(max_execution = 10)]
fn typo_in_a_key() {}

fn main() {}
