//! f64 reference.
