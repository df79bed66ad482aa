pub trait Solid {
    fn volume(&self) -> f64;
}

pub struct Cube {
    edge: f64,
}

impl Cube {
    pub fn cube_volume(&self) -> f64 {
        self.edge * self.edge * self.edge
    }
}

pub fn make_cube(edge: f64) -> Cube {
    Cube { edge }
}

pub enum Axis {
    X,
}
