#[kase::test(max_executions = "10")]
fn integer_as_a_string() {}

#[kase::test(max_steps = 10u64)]
fn integer_with_a_suffix() {}

#[kase::test(stack_size = -1)]
fn negative() {}

#[kase::test(max_executions = 99999999999999999999999)]
fn too_large() {}

#[kase::test(alternatives = -2)]
fn negative_k() {}

#[kase::test(stack_size = 99999999999999999999)]
fn larger_than_a_u64_stack() {}

fn main() {}
