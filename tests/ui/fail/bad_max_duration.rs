#[kase::test(max_duration = "30 seconds")]
fn unit_spelled_out() {}

#[kase::test(max_duration = "1.2.3s")]
fn two_decimal_points() {}

#[kase::test(max_duration = "-1s")]
fn negative() {}

#[kase::test(max_duration = 30)]
fn not_a_string() {}

fn main() {}
