use crate::area::area;

/// Twice a rectangle's area.
pub fn double(w: i64, h: i64) -> i64 {
    tinyhelper::twice(area(w, h))
}
