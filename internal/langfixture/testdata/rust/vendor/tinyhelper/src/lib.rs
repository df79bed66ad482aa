/// Twice n.
pub fn twice(n: i64) -> i64 {
    2 * n
}
