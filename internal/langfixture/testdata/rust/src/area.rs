/// A rectangle's area.
pub fn area(w: i64, h: i64) -> i64 {
    w * h
}
