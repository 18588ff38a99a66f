#[kase::instrument]
struct Counter {
    n: std::sync::atomic::AtomicUsize,
}

#[kase::instrument(strategy = "por")]
fn helper() {}

fn main() {}
