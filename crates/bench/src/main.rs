//! agentlog-bench: corpus generator and benchmarks.
fn main() {}
