#[kase::test(max_steps = 100, strategy = "por", max_steps = 200)]
fn max_steps_twice() {}

fn main() {}
