#[kase::test]
fn takes_a_parameter(n: usize) {
    assert!(n > 0);
}

fn main() {}
