struct Fixture;

impl Fixture {
    #[kase::test]
    fn method(&self) {}
}

fn main() {}
