#[kase::test(crate = "not a path")]
fn crate_not_a_path() {}

#[kase::test(crate = kase)]
fn crate_not_a_string() {}

#[kase::test(replay = "")]
fn empty_replay() {}

#[kase::test(replay = 3)]
fn replay_not_a_string() {}

#[kase::test(peeking = "yes")]
fn peeking_not_a_bool() {}

fn main() {}
