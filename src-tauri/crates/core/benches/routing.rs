//! Criterion bench: one eligibility evaluation plus one SWRR selection.
fn main() {}
