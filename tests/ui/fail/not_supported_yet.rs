#[kase::test(peeking = false)]
fn peeking_off() {}

#[kase::test(persist = true)]
fn persist_on() {}

fn main() {}
