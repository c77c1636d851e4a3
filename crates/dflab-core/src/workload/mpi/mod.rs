//! MPI-like ranks on the network's nodes (see [`op`] for what a program is made of).

pub mod collective;
pub mod op;
