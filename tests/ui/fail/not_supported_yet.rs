#[kase::test(peeking = false)]
fn peeking_off() {}

fn main() {}
