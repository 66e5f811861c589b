//! PMI-1 wire protocol for oxmpi (being written).
