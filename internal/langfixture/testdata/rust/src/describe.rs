/// Whether a side is positive.
pub fn positive(w: i64) -> bool {
    if w > 0 {
        true
    } else {
        false
    }
}
