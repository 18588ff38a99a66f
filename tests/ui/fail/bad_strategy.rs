#[kase::test(strategy = "dfs")]
fn unknown_strategy() {}

#[kase::test(alternatives = "all")]
fn unknown_alternatives() {}

#[kase::test(alternatives = 0)]
fn zero_alternatives() {}

fn main() {}
