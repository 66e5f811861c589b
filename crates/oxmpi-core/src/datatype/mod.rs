//! Datatypes: predefined element types and (soon) derived datatypes.
pub mod primitive;

pub use primitive::{PairValue, Primitive, Repr, TypeClass};
