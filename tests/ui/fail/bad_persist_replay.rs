#[kase::test(persist = "no")]
fn persist_not_a_bool() {}

#[kase::test(replay = "kase1:1..0")]
fn replay_with_an_empty_choice() {}

#[kase::test(replay = "1.0.0")]
fn replay_without_the_prefix() {}

fn main() {}
