//! derive(Equivalence) (being written)
