// An unknown key far from every valid one: no suggestion.
#[kase::test(timeout = 3)]
fn no_suggestion() {}

// Several errors in one attribute are all reported.
#[kase::test(strategy = "dfs", max_steps = "many", strategy = "por")]
fn several_errors() {}

// Not even `key = value` syntax.
#[kase::test(max_steps = )]
fn missing_value() {}

// Only functions.
#[kase::test]
struct NotAFunction;

// Every signature problem at once.
struct Fixture;

impl Fixture {
    #[kase::test]
    async fn everything<T>(&self, _n: T) {}
}

fn main() {}
