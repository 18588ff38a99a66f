#[kase::test(max_duration = "30 seconds")]
fn unit_spelled_out() {}

#[kase::test(max_duration = "1.5s")]
fn fractional() {}

#[kase::test(max_duration = 30)]
fn not_a_string() {}

fn main() {}
