//! A tiny calculator the verify tests check.

pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

pub fn is_empty(v: &Vec<i32>) -> bool {
    v.len() == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn subtracts() {
        assert_eq!(sub(5, 3), 2);
    }

    #[test]
    #[ignore]
    fn ignored() {}
}
