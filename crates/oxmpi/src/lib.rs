//! oxmpi Rust API (being written)
