#[kase::test]
async fn async_test() {}

fn main() {}
