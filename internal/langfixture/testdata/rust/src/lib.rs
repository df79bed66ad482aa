pub mod area;
pub mod describe;
pub mod double;

#[cfg(test)]
mod tests {
    #[test]
    fn area_works() {
        assert_eq!(crate::area::area(2, 3), 6);
    }

    #[test]
    fn double_works() {
        assert_eq!(crate::double::double(2, 3), 13);
    }
}
